"""Telling people: who hears about which event on which channel (in-app, email, webhooks), and sending it.

Owns the notification models, the bell, inbox and preferences pages, their admin and the sending tasks.
"""
