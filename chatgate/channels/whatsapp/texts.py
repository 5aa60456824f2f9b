"""The strings the WhatsApp channel puts in front of people (users and the model reading their
messages), in one place so they can move into a texts catalog with translations."""

from __future__ import annotations

# What the model reads for a message it cannot see yet; {kind} is image, audio, voice, video,
# document or sticker, {caption} the user's caption (may be empty).
MEDIA_PLACEHOLDER = "[{kind}]"  # a file without a caption; the media step replaces it
LOCATION = "Shared location: {place}{lat}, {lon} (https://maps.google.com/?q={lat},{lon})"
CONTACT = "Shared contact: {name}"
CONTACT_DETAIL = "{name} ({details})"
UNNAMED_CONTACT = "unnamed contact"

# A menu (reply buttons or a list) whose text had to go in an earlier message.
CHOOSE = "Choose an option:"
LIST_BUTTON = "Choose…"  # the list's open button when the message names none
