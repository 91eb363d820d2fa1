"""Widgets of the chat screen, one concern per module."""
