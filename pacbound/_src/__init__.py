"""pacbound's implementation: private; the public modules re-export what users call."""
