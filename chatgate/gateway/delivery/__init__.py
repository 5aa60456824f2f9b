"""Getting answers out: render, send with retry, dead targets and the DLQ, streamed drafts,
signs of life while a turn runs, and notices to the operator."""
