"""Tolerations, node selectors, affinity and topology spread (Kubernetes 1.37 pkg/apis/core/validation:
ValidateTolerations, validateTaintEffect, ValidateNodeSelectorRequirement, validateNodeAffinity,
validatePodAffinityTerm, ValidateMatchLabelKeysAndMismatchLabelKeys, validateTopologySpreadConstraints,
ValidateMatchLabelKeysInTopologySpread; apimachinery ValidateLabels, ValidateLabelSelector).

Versioned: `matchLabelKeys` and `mismatchLabelKeys` of pod affinity terms are dropped unread before 1.31
(feature MatchLabelKeysInPodAffinity off); a topology spread constraint's `matchLabelKeys` is dropped
before 1.27 (MatchLabelKeysInPodTopologySpread off), follows the older rule (no key of its selector at
all, never without a selector) from 1.27 to 1.33, and the newer one (feature
MatchLabelKeysInPodTopologySpreadSelectorMerge) from 1.34."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Path, Violation, duplicate, forbidden, invalid, not_supported, required
from mpigen.checks.pod.metadata import label_selector, labels
from mpigen.checks.pod.view import Pod, mapping, mappings, number, text

TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES = ("Honor", "Ignore")


def tolerations(pod: Pod) -> Iterator[Violation]:
    for index, item in enumerate(mappings(pod.spec.get("tolerations"))):
        if item is not None:
            yield from toleration(item, pod.path("tolerations", index))


def toleration(item: dict[str, Any], at: Path) -> Iterator[Violation]:
    """One toleration of the spec, or of the tolerations annotation (mpigen.checks.pod.annotations)."""
    key, operator, value = (text(item.get("key")), text(item.get("operator")), text(item.get("value")))
    effect = text(item.get("effect"))
    if key:
        yield from (invalid((*at, "key"), key, msg) for msg in formats.qualified_name(key))
    elif operator != "Exists":
        yield invalid(
            (*at, "operator"),
            operator,
            'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        )
    if item.get("tolerationSeconds") is not None and effect != "NoExecute":
        yield invalid((*at, "effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
    if operator in ("Equal", ""):
        problems = formats.label_value(value)
        if problems:
            yield invalid((*at, "operator"), value, ";".join(problems))
    elif operator == "Exists":
        if value:
            yield invalid((*at, "operator"), value, "value must be empty when `operator` is 'Exists'")
    else:
        yield not_supported((*at, "operator"), operator, TOLERATION_OPERATORS)
    if effect and effect not in TAINT_EFFECTS:
        yield not_supported((*at, "effect"), effect, TAINT_EFFECTS)


def node_selector(pod: Pod) -> Iterator[Violation]:
    yield from labels(pod.spec.get("nodeSelector"), pod.path("nodeSelector"))


def _requirement(rq: dict[str, Any], at: Path) -> Iterator[Violation]:
    operator, values = text(rq.get("operator")), rq.get("values") or []
    if operator in ("In", "NotIn") and not values:
        yield required((*at, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist") and values:
        yield forbidden((*at, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif operator in ("Gt", "Lt") and len(values) != 1:
        yield required((*at, "values"), "must be specified single value when `operator` is 'Lt' or 'Gt'")
    elif operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        yield invalid((*at, "operator"), operator, "not a valid selector operator")
    key = text(rq.get("key"))
    yield from (invalid((*at, "key"), key, msg) for msg in formats.qualified_name(key))
    for index, value in enumerate(values if isinstance(values, list) else []):
        if isinstance(value, str):
            yield from (invalid((*at, "values", index), value, msg) for msg in formats.label_value(value))


def node_affinity(pod: Pod) -> Iterator[Violation]:
    affinity = mapping(mapping(pod.spec.get("affinity")).get("nodeAffinity"))
    at = pod.path("affinity", "nodeAffinity")
    needed = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(needed, dict):
        where = (*at, "requiredDuringSchedulingIgnoredDuringExecution")
        terms = mappings(needed.get("nodeSelectorTerms"))
        if not terms:
            yield required((*where, "nodeSelectorTerms"), "must have at least one node selector term")
        for index, term in enumerate(terms):
            for j, rq in enumerate(mappings((term or {}).get("matchExpressions"))):
                yield from _requirement(rq or {}, (*where, "nodeSelectorTerms", index, "matchExpressions", j))
    for index, preferred in enumerate(
        mappings(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ):
        where = (*at, "preferredDuringSchedulingIgnoredDuringExecution", index)
        weight = number((preferred or {}).get("weight")) or 0
        if not 1 <= weight <= 100:
            yield invalid((*where, "weight"), weight, "must be in the range 1-100")
        for j, rq in enumerate(
            mappings(mapping((preferred or {}).get("preference")).get("matchExpressions"))
        ):
            yield from _requirement(rq or {}, (*where, "preference", "matchExpressions", j))


def pod_affinity(pod: Pod) -> Iterator[Violation]:
    affinity = mapping(pod.spec.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        at = pod.path("affinity", kind)
        rules = mapping(affinity.get(kind))
        for index, term in enumerate(mappings(rules.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            yield from _pod_affinity_term(
                term or {}, (*at, "requiredDuringSchedulingIgnoredDuringExecution", index), pod.version
            )
        for index, weighted in enumerate(
            mappings(rules.get("preferredDuringSchedulingIgnoredDuringExecution"))
        ):
            where = (*at, "preferredDuringSchedulingIgnoredDuringExecution", index)
            weight = number((weighted or {}).get("weight")) or 0
            if not 1 <= weight <= 100:
                yield invalid((*where, "weight"), weight, "must be in the range 1-100")
            yield from _pod_affinity_term(
                mapping((weighted or {}).get("podAffinityTerm")), (*where, "podAffinityTerm"), pod.version
            )


def _pod_affinity_term(term: dict[str, Any], at: Path, version: tuple[int, int]) -> Iterator[Violation]:
    yield from label_selector(term.get("labelSelector"), (*at, "labelSelector"))
    yield from label_selector(term.get("namespaceSelector"), (*at, "namespaceSelector"))
    for name in term.get("namespaces") or []:
        if isinstance(name, str):  # the server names the list `namespace`
            yield from (invalid((*at, "namespace"), name, msg) for msg in formats.dns1123_label(name))
    if version >= (1, 31):
        yield from _label_keys(
            at, term.get("matchLabelKeys"), term.get("mismatchLabelKeys"), term.get("labelSelector")
        )
    yield from _topology_key(term, at)


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _keys_named(at: Path, keys: list[str], selector: object) -> Iterator[Violation]:
    if not keys:
        return
    if not isinstance(selector, dict):
        yield forbidden(at, "must not be specified when labelSelector is not set")
        return
    for index, key in enumerate(keys):
        yield from (invalid((*at, index), key, msg) for msg in formats.qualified_name(key))


def _label_keys(at: Path, match: object, mismatch: object, selector: object) -> Iterator[Violation]:
    """ValidateMatchLabelKeysAndMismatchLabelKeys, on a selector that has not been merged with the keys
    (a template's: only a Pod's is merged as it is created)."""
    match_keys, mismatch_keys = _strings(match), _strings(mismatch)
    yield from _keys_named((*at, "matchLabelKeys"), match_keys, selector)
    yield from _keys_named((*at, "mismatchLabelKeys"), mismatch_keys, selector)
    if isinstance(selector, dict):
        where = {key: index for index, key in enumerate(match_keys)}
        seen = {str(key) for key in mapping(selector.get("matchLabels"))}
        for expression in mappings(selector.get("matchExpressions")):
            key = text((expression or {}).get("key"))
            if key in where and key in seen:  # the server names the term, indexed by the key's place
                yield invalid((*at, where[key]), key, "exists in both matchLabelKeys and labelSelector")
            seen.add(key)
    for index, key in enumerate(match_keys):
        if key in mismatch_keys:
            yield invalid(
                (*at, "matchLabelKeys", index), key, "exists in both matchLabelKeys and mismatchLabelKeys"
            )


def _spread_label_keys(at: Path, match: object, selector: object) -> Iterator[Violation]:
    """ValidateMatchLabelKeysInTopologySpread (Kubernetes 1.27 to 1.33)."""
    keys = _strings(match)
    if not keys:
        return
    at = (*at, "matchLabelKeys")
    known: set[str] = set()
    if isinstance(selector, dict):
        known.update(str(key) for key in mapping(selector.get("matchLabels")))
        known.update(text((e or {}).get("key")) for e in mappings(selector.get("matchExpressions")))
    else:
        yield forbidden(at, "must not be specified when labelSelector is not set")
    for index, key in enumerate(keys):
        yield from (invalid((*at, index), key, msg) for msg in formats.qualified_name(key))
        if key in known:
            yield invalid((*at, index), key, "exists in both matchLabelKeys and labelSelector")


def _topology_key(term: dict[str, Any], at: Path) -> Iterator[Violation]:
    key = text(term.get("topologyKey"))
    if not key:
        yield required((*at, "topologyKey"), "can not be empty")
    yield from (invalid((*at, "topologyKey"), key, msg) for msg in formats.qualified_name(key))


def topology_spread(pod: Pod) -> Iterator[Violation]:
    constraints = [c or {} for c in mappings(pod.spec.get("topologySpreadConstraints"))]
    for index, constraint in enumerate(constraints):
        at = pod.path("topologySpreadConstraints", index)
        skew = number(constraint.get("maxSkew")) or 0
        if skew <= 0:
            yield invalid((*at, "maxSkew"), skew, "must be greater than zero")
        key, when = text(constraint.get("topologyKey")), text(constraint.get("whenUnsatisfiable"))
        if not key:
            yield required((*at, "topologyKey"), "can not be empty")
        if when not in WHEN_UNSATISFIABLE:
            yield not_supported((*at, "whenUnsatisfiable"), when, WHEN_UNSATISFIABLE)
        if any(
            (text(c.get("topologyKey")), text(c.get("whenUnsatisfiable"))) == (key, when)
            for c in constraints[index + 1 :]
        ):
            yield duplicate((*at, "{topologyKey, whenUnsatisfiable}"), f"{{{key}, {when}}}")
        domains = number(constraint.get("minDomains"))
        if domains is not None and domains <= 0:
            yield invalid((*at, "minDomains"), domains, "must be greater than zero")
        if domains is not None and when != "DoNotSchedule":
            yield invalid(
                (*at, "minDomains"),
                domains,
                f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}",
            )
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(field)
            if isinstance(policy, str) and policy not in INCLUSION_POLICIES:
                yield not_supported((*at, field), policy, INCLUSION_POLICIES)
        selector = constraint.get("labelSelector")
        if pod.version >= (1, 34):
            yield from _label_keys(at, constraint.get("matchLabelKeys"), None, selector)
        elif pod.version >= (1, 27):
            yield from _spread_label_keys(at, constraint.get("matchLabelKeys"), selector)
        yield from label_selector(selector, (*at, "labelSelector"))
