"""What the learners share, below them: candidates and edges, the boosting loop, column
generation and its masters, the bound objective, MinCq's program. Private."""
