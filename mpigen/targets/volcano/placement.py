"""Placement on the volcano target (`--topology`, mpigen.placement): the Volcano Job's `networkTopology`.

Volcano (v1.11 on; `highestTierName` from v1.14) keeps a job inside one HyperNode of a tier: the Job's
`spec.networkTopology` becomes its PodGroup's (volcano v1.14.1 pkg/controllers/job/job_controller_actions.go),
and the scheduler places the whole gang under one HyperNode of at most that tier, `mode: hard` (or the
gang waits) or `mode: soft` (as few HyperNodes as it can). The tier is named, not numbered:
`highestTierName` is a HyperNode `spec.tierName`, which the scheduler turns into the tier's number
(v1.14.1 pkg/scheduler/actions/allocate/allocate.go; v1.15.1 pkg/scheduler/framework/session.go:
`translateHighestTierNameToAllowed`). Volcano v1.14's Job CRD takes `highestTierName` only as a DNS
subdomain, so a label key with a prefix (`example.com/rack`) is refused here.

How a node-label key names a tier: Volcano's label discovery (the `label` source of the
`volcano-controller` network-topology discovery configuration, pkg/controllers/hypernode/discovery/
label/label.go) builds one HyperNode per value of each configured node-label key, tier 1 for the
first key, and gives each the key itself as its `tierName`. So with `rack` and `block` configured
there, `required:rack` is `{mode: hard, highestTierName: rack}`. Hand-made HyperNodes must carry
`tierName: <the label key>` for the same meaning (docs/placement.md). `required` is `hard`,
`preferred` is `soft`; a slice has no Job-level word here and is refused.
"""

from __future__ import annotations

from typing import Any

from mpigen.errors import Issue
from mpigen.names import is_dns1123_subdomain
from mpigen.options import Options
from mpigen.placement import REQUIRED, SLICE, placement

MODES = {REQUIRED: "hard"}
SOFT = "soft"


def check_placement(options: Options) -> list[Issue]:
    """A slice, or a label key Volcano's Job cannot name as a tier."""
    wanted = placement(options.topology)
    if wanted is None:
        return []
    if wanted.mode == SLICE:
        return [
            Issue(
                (),
                f"--topology (mpigen.dev/topology) {wanted} is refused on the volcano target: a Volcano Job's networkTopology keeps the whole gang under one HyperNode tier and has no slices of ranks; use required: or preferred:, or --target jobset with --queue",
            )
        ]
    if not is_dns1123_subdomain(wanted.key):
        # volcano v1.14.1 config/crd/volcano/bases/batch.volcano.sh_jobs.yaml: highestTierName's pattern
        return [
            Issue(
                (),
                f"--topology (mpigen.dev/topology) {wanted}: on the volcano target the label key names a HyperNode tier (networkTopology.highestTierName), which Volcano v1.14's Job takes only as a DNS subdomain (lower-case letters, digits, '-' and '.', no '/'); label the nodes by such a key (like rack) for Volcano's label discovery",
            )
        ]
    return []


def network_topology(options: Options) -> dict[str, Any] | None:
    """The Job's `spec.networkTopology` (None: no placement asked)."""
    wanted = placement(options.topology)
    if wanted is None:
        return None
    return {"mode": MODES.get(wanted.mode, SOFT), "highestTierName": wanted.key}
