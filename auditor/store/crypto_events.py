"""Session events that hand every write of an encrypted column the subject it belongs to.

:class:`~auditor.store.crypto.EncryptedText` can seal a value only when it knows the
subject (whose key) and the row (the binding). Two write paths exist, both covered here,
so writers (importer, lifecycle, sync, connectors mirror, erasure) need no change:

* unit-of-work flushes (``session.add``, attribute changes): ``before_flush`` wraps the
  encrypted attributes of new and changed ``Memory`` / ``Consent`` objects in a
  :class:`~auditor.store.crypto.SealRequest` (and re-seals them when the subject changes);
* ORM bulk statements (``session.execute(insert(Memory), [dicts])``):
  ``do_orm_execute`` wraps the values in each parameter dict.

What is *not* covered, and must not be used for these columns: Core statements on a bare
connection, and ``update(...).values(fact=...)`` with a value that is not a ``SealRequest``
(none exist in memaudit; ``memaudit keys status`` counts plain values left in the store,
and ``memaudit keys migrate`` seals them). After every load of a ``Memory`` or ``Consent``
the row tag of each decrypted value is checked against the row.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import ORMExecuteState, Session
from sqlalchemy.orm.attributes import flag_modified, set_committed_value

from auditor.errors import StoreError
from auditor.store.crypto import RowMismatchError, SealRequest, cipher_of, opened_tag, row_tag
from auditor.store.models import Consent, Memory

__all__ = ["ENCRYPTED_FIELDS", "binding_for", "install", "seal_params"]

#: Model -> its encrypted attributes.
ENCRYPTED_FIELDS: dict[type[Any], tuple[str, ...]] = {
    Memory: ("fact", "source_uri"),
    Consent: ("source",),
}


def binding_for(model: type[Any], values: Any, get: Any = getattr) -> str | None:
    """The row binding of a ciphertext: the memory id, or subject + category of a consent."""
    if model is Memory:
        mid = get(values, "memory_id")
        return None if mid is None else str(mid)
    subject, category = get(values, "subject"), get(values, "category")
    if subject is None or category is None:
        return None
    return f"consent\x00{subject}\x00{category}"


def _wrap(value: Any, subject: str, binding: str) -> Any:
    if value is None or isinstance(value, SealRequest) or not isinstance(value, str):
        return value
    return SealRequest(str(value), subject, binding)


def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
    for obj in list(session.new) + list(session.dirty):
        fields = ENCRYPTED_FIELDS.get(type(obj))
        if not fields:
            continue
        state = inspect(obj)
        rekey = obj in session.dirty and (
            state.attrs.subject.history.has_changes()
            or (type(obj) is Consent and state.attrs.category.history.has_changes())
        )
        subject, binding = obj.subject, binding_for(type(obj), obj)
        if subject is None or binding is None:
            continue  # the flush itself reports the missing key column
        for name in fields:
            value = getattr(obj, name)
            if value is None or isinstance(value, SealRequest):
                continue
            if obj in session.new or rekey or state.attrs[name].history.has_changes():
                setattr(obj, name, SealRequest(str(value), subject, binding))
                flag_modified(obj, name)
                session.info.setdefault(_SEALED, []).append((obj, name))


def _after_flush_postexec(session: Session, _context: Any) -> None:
    """Put plain ``str`` back in the objects: readers (RE2) refuse ``str`` subclasses."""
    for obj, name in session.info.pop(_SEALED, ()):
        value = obj.__dict__.get(name)
        if isinstance(value, SealRequest):
            set_committed_value(obj, name, str(value))


def seal_params(model: type[Any], params: Any) -> list[tuple[dict[str, Any], str, Any]]:
    """Wrap the encrypted values of bulk-insert parameter dicts in place.

    Returns:
        (dict, key, original value) of every change, to put the caller's values back.
    """
    fields = ENCRYPTED_FIELDS[model]
    rows = params if isinstance(params, list) else [params]
    changed: list[tuple[dict[str, Any], str, Any]] = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        subject = row.get("subject")
        binding = binding_for(model, row, lambda r, k: r.get(k))
        if subject is None or binding is None:
            continue
        for name in fields:
            if name in row and not isinstance(row[name], SealRequest):
                changed.append((row, name, row[name]))
                row[name] = _wrap(row[name], str(subject), binding)
    return changed


def _do_orm_execute(state: ORMExecuteState) -> Any:
    if not (state.is_insert or state.is_update):
        return None
    mapper = state.bind_mapper
    model = mapper.class_ if mapper is not None else None
    if model not in ENCRYPTED_FIELDS:
        return None
    # ``update(Memory).values(fact=...)``: the value has no row, so no subject to seal it
    # with; writing it in clear would defeat the point. Refused while encryption is on.
    values = getattr(state.statement, "_values", None) or {}
    named = {getattr(k, "key", k) for k in values}
    clear = sorted(set(ENCRYPTED_FIELDS[model]) & named)
    if clear and cipher_of(state.session.get_bind(mapper=mapper).dialect) is not None:
        table = model.__tablename__
        raise StoreError(
            f"{', '.join(f'{table}.{c}' for c in clear)} cannot be set by an UPDATE "
            "statement while encryption is on: load the row and set the attribute"
        )
    if not state.parameters:
        return None
    changed = seal_params(model, state.parameters)
    try:
        return state.invoke_statement()
    finally:
        for row, name, original in changed:  # the caller's dicts keep their plain values
            row[name] = original


def _check_loaded(target: Any, *_args: Any) -> None:
    fields = ENCRYPTED_FIELDS.get(type(target), ())
    state = inspect(target)
    binding = None
    for name in fields:
        if name in state.unloaded:
            continue
        tag = opened_tag(state.dict.get(name))
        if tag is not None:
            if binding is None:
                binding = binding_for(type(target), state.dict, lambda d, k: d.get(k))
            if binding is not None and tag != row_tag(binding):
                raise RowMismatchError(
                    f"{type(target).__tablename__}.{name} holds a ciphertext sealed for "
                    "another row (copied or swapped): refused"
                )


_installed = False
_SEALED = "memaudit_sealed"


def install() -> None:
    """Register the events (idempotent; done by :class:`auditor.store.db.Database`)."""
    global _installed
    if _installed:
        return
    event.listen(Session, "before_flush", _before_flush)
    event.listen(Session, "after_flush_postexec", _after_flush_postexec)
    event.listen(Session, "do_orm_execute", _do_orm_execute)
    for model in ENCRYPTED_FIELDS:
        event.listen(model, "load", _check_loaded)
        event.listen(model, "refresh", _check_loaded)
    _installed = True
