"""Helpers shared by the test tiers: local servers, fault injection, waiting, putting records."""
