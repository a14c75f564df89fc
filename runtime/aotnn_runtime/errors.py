"""Exceptions raised by the runtime before any native code is reached."""


class ArtifactError(Exception):
    """An artifact is missing, incomplete, corrupt or of an unknown format."""


class InputError(ValueError):
    """Inputs given to a module do not match what the entry point expects."""


class DeviceUnavailableError(RuntimeError):
    """The artifact's target needs a device, driver or package this machine lacks (the message names it)."""
