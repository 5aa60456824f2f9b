"""Attachments between channel and agent: limits, type sniffing, temp files, vision parts,
speech-to-text and document text. No platform code: fetching stays in each channel adapter."""
