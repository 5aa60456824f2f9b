"""The ground floor: the vocabulary every room shares (messages, targets, attachments, transcript
lines, outbound messages, stages and results, errors, reason codes, text ids). Imports nothing
else of chatgate."""
