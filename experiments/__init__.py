"""Experiments behind lessons' "outside the lesson" results, too long for a lesson's budget."""
