"""The `agents.<name>.media` section: how an agent's turns read the files users send."""

from __future__ import annotations

from pydantic import Field, SecretStr

from chatgate.config.base import StrictModel
from chatgate.policies.media import MB, MediaLimits


class TranscriptionConfig(StrictModel):
    """A Whisper-compatible speech-to-text endpoint (litellm ``atranscription``)."""

    model: str = Field("whisper-1", min_length=1)
    api_base: str | None = None
    api_key: SecretStr | None = None


class AgentMediaConfig(StrictModel):
    """On by default; an operator turns media understanding off, not on."""

    enabled: bool = True
    max_bytes: int = Field(20 * MB, gt=0, description="largest single file fetched")
    max_files_per_turn: int = Field(10, ge=1)
    max_total_bytes: int = Field(50 * MB, gt=0, description="all files of one turn together")
    max_audio_s: float = Field(600.0, gt=0, description="longest voice note/audio transcribed")
    download_timeout_s: float = Field(60.0, gt=0)
    max_concurrent_downloads: int = Field(
        8, ge=1, description="files downloading at once, all turns together"
    )
    max_concurrent_transcriptions: int = Field(
        4, ge=1, description="voice notes uploading to the transcriber at once, all turns together"
    )
    vision: bool | None = Field(None, description="None: ask litellm whether the model sees images")
    vision_model: str | None = Field(
        None, description="describes images for a model without vision (agent's api_base/key)"
    )
    max_image_side: int = Field(1568, ge=64, description="longer side, pixels, sent to the model")
    max_document_chars: int = Field(20_000, ge=100)
    transcription: TranscriptionConfig | None = Field(
        None, description="None: the agent's own api_base/api_key with whisper-1"
    )
    echo_transcript: bool = False

    def limits(self) -> MediaLimits:
        return MediaLimits(
            self.max_bytes, self.max_files_per_turn, self.max_total_bytes, self.max_audio_s
        )
