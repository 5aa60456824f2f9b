"""The strings the WhatsApp channel puts in front of the model reading users' messages (what
users themselves read, such as menu prompts, lives in the texts catalog, `menu.*`)."""

from __future__ import annotations

# What the model reads for a message it cannot see yet; {kind} is image, audio, voice, video,
# document or sticker, {caption} the user's caption (may be empty).
MEDIA_PLACEHOLDER = "[{kind}]"  # a file without a caption; the media step replaces it
LOCATION = "Shared location: {place}{lat}, {lon} (https://maps.google.com/?q={lat},{lon})"
CONTACT = "Shared contact: {name}"
CONTACT_DETAIL = "{name} ({details})"
UNNAMED_CONTACT = "unnamed contact"
