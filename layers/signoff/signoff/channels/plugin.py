"""Channels you write or install: ``type: python`` classes and ``signoff.channels`` entry points.

A plug-in channel is a class with ``from_config(options, context, *, name)``
and the ``Channel`` port's ``notify`` (``signoff.channels.base``). It is named
two ways, both entries of the one registry (``CHANNEL_TYPES``):

- ``{type: python, class: "package.module:Class", options: {...}}`` in
  ``channels.yaml``;
- an installed distribution's entry point in the group ``signoff.channels``
  (``mytype = "package.module:Class"``): ``{type: mytype, options: {...}}``. The
  entry point is looked up only when a channel of an unknown type is validated,
  and then joins ``CHANNEL_TYPES``.

Either way ``options`` is validated by the class's ``settings_model`` (a
pydantic model) when it declares one, else handed over as a dict. Validating
``channels.yaml`` imports the class, so an import error or a class that is no
channel is refused at load with the file and field named; what only building
shows (a secret missing, ``from_config`` raising) fails that channel's rows
alone (``channels.build.ChannelSet``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from signoff.channels.registry import CHANNEL_TYPES, ChannelType
from signoff.plugins import entry_point, load

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.channels.base import Channel

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginChannel",
    "installed",
    "plugin_class",
    "plugin_options",
]

ENTRY_POINT_GROUP: Final = "signoff.channels"
_BUILDER: Final = "signoff.channels.plugin:PluginChannel"
_SETTINGS: Final = "signoff.channels.settings.plugin:PluginSettings"


def installed(type_name: str) -> ChannelType | None:
    """The registry entry of ``type_name``, an installed plug-in's added now; None if none.

    Only called for a type the table does not hold, so a deployment that uses no
    plug-in never scans the installed distributions.
    """
    known = CHANNEL_TYPES.get(type_name)
    if known is not None:
        return known
    target = entry_point(ENTRY_POINT_GROUP, type_name)
    if target is None:
        return None
    kind = ChannelType(channel=_BUILDER, settings=_SETTINGS, plugin=target)
    return CHANNEL_TYPES.setdefault(type_name, kind)


def plugin_class(path: str) -> Any:
    """The channel class ``path`` (``package.module:Class``) names, imported now.

    Raises:
        ImportError: its module (or a library it needs) cannot be imported.
        ValueError: ``path`` is malformed, names nothing, or names no channel class
            (a class with ``from_config`` and ``notify``).
    """
    try:
        cls = load(path)
    except ImportError as exc:
        raise ImportError(f"{path!r} cannot be imported: {type(exc).__name__}: {exc}") from exc
    except AttributeError as exc:
        raise ValueError(f"{path!r} names nothing: {exc}") from exc
    if not isinstance(cls, type):
        raise ValueError(f"{path!r} is not a class")
    missing = [m for m in ("from_config", "notify") if not callable(getattr(cls, m, None))]
    if missing:
        raise ValueError(
            f"{path!r} is no channel class: it has no {' and no '.join(missing)} "
            "(see signoff.channels.base.Channel)"
        )
    return cls


def plugin_options(cls: Any, options: Mapping[str, Any]) -> Any:
    """``options`` as ``cls.from_config`` takes them: its ``settings_model``'s instance, or a dict.

    Raises:
        pydantic.ValidationError: the options do not fit the class's settings model.
    """
    model = getattr(cls, "settings_model", None)
    if model is None:
        return dict(options)
    return model.model_validate(dict(options))


class PluginChannel:
    """The builder of every plug-in channel: imports its class and builds it from ``options``."""

    @classmethod
    def from_config(cls, settings: Any, context: Any, *, name: str) -> Channel:
        """The channel ``name`` a ``PluginSettings`` (class path and options) describes.

        Raises:
            ImportError: the class cannot be imported (here, not at load: e.g. a
                library removed since).
            ValueError: the class, its options or what it built is no channel.
            Exception: whatever the plug-in's ``from_config`` raises.
        """
        target = plugin_class(settings.class_path)
        channel: Channel = target.from_config(
            plugin_options(target, settings.options), context, name=name
        )
        if not callable(getattr(channel, "notify", None)):
            raise ValueError(f"{settings.class_path}.from_config returned no channel")
        return channel
