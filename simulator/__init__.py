"""A simulated AgentOS platform: the Holds API over real HTTP, backed by in-memory state.

The review queue is developed and tested against this instead of a live platform. The
server and its state use only the standard library, so tests can start it in-process.
"""
