"""gateway.yaml: models, loader (interpolation, secret files, line-numbered errors), migration."""

from chatgate.config.errors import EX_CONFIG, ConfigError, ConfigIssue
from chatgate.config.loader import LoadedConfig, load_config
from chatgate.config.models import CONFIG_VERSION, GatewayConfig

__all__ = [
    "CONFIG_VERSION",
    "EX_CONFIG",
    "ConfigError",
    "ConfigIssue",
    "GatewayConfig",
    "LoadedConfig",
    "load_config",
]
