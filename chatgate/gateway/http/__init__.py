"""The one HTTP server: routes, the serving socket, the operator API, status, file links and the
dashboard."""
