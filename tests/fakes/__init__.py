"""Fake platform and model servers on 127.0.0.1 that the real SDKs talk to over loopback."""
