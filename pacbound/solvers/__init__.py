"""Learners of weighted majority votes, one per module."""
