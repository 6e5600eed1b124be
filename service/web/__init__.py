"""The web app: server-rendered pages over the same logic as the API (home and buy vs rent so far)."""
