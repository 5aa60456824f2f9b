"""Attachments between channels and agents (no platform code: fetching and uploading stay in each
channel's adapter). In: limits, type sniffing, temporary files, vision parts, speech-to-text and
document text (`prepare`, `step`). Out: stored reply files and their signed links (`outgoing`)."""
