"""A plug-in channel's settings (``type: python``, or an installed type's)."""

from typing import Any

from pydantic import Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from signoff.channels.config import ChannelSettings, validation_error
from signoff.channels.plugin import plugin_class, plugin_options

__all__ = ["PluginSettings"]


class PluginSettings(ChannelSettings):
    """A plug-in channel (``channels/plugin.py``): ``type: python`` or an installed type.

    ``class`` is ``package.module:Class`` (an installed type's comes from its entry
    point); ``options`` go to the class's ``from_config``.
    """

    type: str
    class_path: str = Field(alias="class", min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)

    def verify(self) -> None:
        """Refuses a class that cannot be imported or is no channel, and bad options.

        Raises:
            ValidationError: at ``class`` or ``options.<field>``.
        """
        try:
            cls = plugin_class(self.class_path)
        except (ImportError, ValueError) as exc:
            raise validation_error("plugin_class", str(exc), ("class",), self.class_path) from exc
        try:
            plugin_options(cls, self.options)
        except ValidationError as exc:
            errors = [
                InitErrorDetails(
                    type=PydanticCustomError(err["type"], err["msg"]),
                    loc=("options", *err["loc"]),
                    input=err.get("input"),
                )
                for err in exc.errors(include_url=False)
            ]
            raise ValidationError.from_exception_data("PluginSettings", errors) from exc

    def approval_only(self) -> bool:
        """The class's own ``approval_only`` attribute (a row or queue backend written as
        a plug-in); imported when channels.yaml was validated, so this is a lookup."""
        return getattr(plugin_class(self.class_path), "approval_only", False) is True
