"""Generic signed-webhook ingress: HMAC-verified HTTP events become agent turns."""
