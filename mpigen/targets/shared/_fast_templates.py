"""The templates of templates/*.j2 as Python functions, written by tools/templategen.py: do not edit.

Each function renders its template exactly as jinja2 does with mpigen's settings
(`mpigen.targets.shared.templating.jinja_environment`); `TEMPLATES` maps a template's file name to it. A missing value
raises KeyError, as StrictUndefined raises in jinja2; `| q` is `shlex.quote(str(value))`, as the
environment's filter `mpigen.targets.shared.templating.shell_quote`. A stand-in for jinja2
(mpigen.reference.STAND_INS): `render` declines under the reference switch.
"""

from __future__ import annotations

from collections.abc import Callable
from shlex import quote
from typing import Any

from mpigen.reference import stand_in


def render_cleanup_sh(values: dict[str, Any]) -> str:
    out: list[str] = []
    out.append(
        '#!/bin/sh\n'
        '# cleanup (rendered by mpigen): runs in its own Job next to the launcher Job. It waits until the\n'
        '# launcher Job has finished and then scales the worker StatefulSet to 0, as the mpi-operator v0.2.0\n'
        '# did, so idle workers do not hold their nodes (and GPUs) after the run.\n'
        "# Exit 0: workers scaled to 0 (or already gone). Exit 1: scaling failed; the Job's backoffLimit retries.\n"
        'set -u\n'
        '\n'
        'kubectl='
    )
    out.append(str(quote(str(values['kubectl']))))
    out.append(
        '\n'
        'launcher_job='
    )
    out.append(str(quote(str(values['launcher_job']))))
    out.append(
        '\n'
        'statefulset='
    )
    out.append(str(quote(str(values['statefulset']))))
    out.append(
        '\n'
        'self_job='
    )
    out.append(str(quote(str(values['self_job']))))
    out.append(
        '\n'
        'self_rbac='
    )
    out.append(str(quote(str(values['self_rbac']))))
    out.append(
        '\n'
        'interval='
    )
    out.append(str(quote(str(values['interval_seconds']))))
    out.append(
        '\n'
        'clock_step='
    )
    out.append(str(quote(str(values['clock_step']))))
    out.append(
        '\n'
        'missing_grace='
    )
    out.append(str(quote(str(values['missing_grace_seconds']))))
    out.append(
        '\n'
        'true_conditions='
    )
    out.append(str(quote(str(values['true_conditions']))))
    out.append(
        '\n'
        'uid_format='
    )
    out.append(str(quote(str(values['uid_format']))))
    out.append(
        '\n'
        'owner_patch_head='
    )
    out.append(str(quote(str(values['owner_patch_head']))))
    out.append(
        '\n'
        'owner_patch_tail='
    )
    out.append(str(quote(str(values['owner_patch_tail']))))
    out.append(
        '\n'
        'scale_attempts=5\n'
        '\n'
        'log() {\n'
        '    printf \'%s\\n\' "$*"\n'
        '}\n'
        '\n'
        'warn() {\n'
        '    printf \'warning: %s\\n\' "$*" >&2\n'
        '}\n'
        '\n'
        '# Seconds on a clock: `date +%s`, or without a usable clock the seconds slept so far.\n'
        'slept=0\n'
        'now() {\n'
        "    t=$(date +%s 2>/dev/null) || t=''\n"
        '    case "$t" in\n'
        "        '' | *[!0-9]*) t=$slept ;;\n"
        '    esac\n'
        '}\n'
        '\n'
        '# adopt: make this Job the owner of its ServiceAccount and Role, so that the garbage collector\n'
        '# deletes them with this Job once its ttlSecondsAfterFinished has passed (its RoleBinding, which it\n'
        '# may not patch, it deletes itself when done: unbind). Best effort:\n'
        '# scaling the workers down matters more than two small objects left behind.\n'
        'adopted=no\n'
        'adopt() {\n'
        '    if ! uid=$("$kubectl" get job "$self_job" -o "$uid_format" 2>&1); then\n'
        '        warn "cannot read the uid of job/$self_job, its RBAC objects stay behind: $uid"\n'
        '        return 0\n'
        '    fi\n'
        '    case "$uid" in\n'
        "        '' | *[!0-9a-f-]*)\n"
        '            warn "job/$self_job has no usable uid (\'$uid\'), its RBAC objects stay behind"\n'
        '            return 0\n'
        '            ;;\n'
        '    esac\n'
        '    adopted=yes\n'
        '    for kind in serviceaccount role; do\n'
        '        if out=$("$kubectl" patch "$kind" "$self_rbac" --type=merge -p "$owner_patch_head$uid$owner_patch_tail" 2>&1); then\n'
        '            log "$kind/$self_rbac is now owned by job/$self_job"\n'
        '        else\n'
        '            adopted=no\n'
        '            warn "cannot adopt $kind/$self_rbac, it stays behind after job/$self_job: $out"\n'
        '        fi\n'
        '    done\n'
        '}\n'
        '\n'
        "# unbind: delete this Job's own RoleBinding, its last call to the API (it takes the Job's rights).\n"
        'unbind() {\n'
        '    if out=$("$kubectl" delete rolebinding "$self_rbac" --wait=false 2>&1); then\n'
        '        log "deleted rolebinding/$self_rbac"\n'
        '    else\n'
        '        warn "cannot delete rolebinding/$self_rbac, it stays behind after job/$self_job: $out"\n'
        '    fi\n'
        '}\n'
        '\n'
        '# wait_for_launcher: return once the launcher Job has a Complete or Failed condition, or has been\n'
        '# missing for missing_grace seconds in a row; sets $reason. A failed attempt that the Job will\n'
        '# retry has failed pods but no Failed condition, so it is not the end. Other errors: keep polling.\n'
        'wait_for_launcher() {\n'
        "    missing_since=''\n"
        "    last_error=''\n"
        '    while :; do\n'
        '        if out=$("$kubectl" get job "$launcher_job" -o "$true_conditions" 2>&1); then\n'
        "            missing_since=''\n"
        '            case " $out " in\n'
        '                *\' Complete \'*) reason="job/$launcher_job is Complete"; return 0 ;;\n'
        '                *\' Failed \'*) reason="job/$launcher_job is Failed"; return 0 ;;\n'
        '            esac\n'
        '        else\n'
        '            case "$out" in\n'
        "                *'(NotFound)'*)\n"
        '                    now\n'
        '                    if [ -z "$missing_since" ]; then\n'
        '                        missing_since=$t\n'
        '                        log "job/$launcher_job not found; it counts as deleted after ${missing_grace}s"\n'
        '                    fi\n'
        '                    if [ $((t - missing_since)) -ge "$missing_grace" ]; then\n'
        '                        reason="job/$launcher_job has been missing for $((t - missing_since))s (deleted by hand?)"\n'
        '                        return 0\n'
        '                    fi\n'
        '                    ;;\n'
        '                *)\n'
        '                    if [ "$out" != "$last_error" ]; then\n'
        '                        warn "kubectl: $out"\n'
        '                        last_error=$out\n'
        '                    fi\n'
        '                    ;;\n'
        '            esac\n'
        '        fi\n'
        '        sleep "$interval"\n'
        '        slept=$((slept + clock_step))\n'
        '    done\n'
        '}\n'
        '\n'
        '# scale_down: scale the worker StatefulSet to 0; one that is already gone is fine.\n'
        'scale_down() {\n'
        '    attempt=1\n'
        '    while :; do\n'
        '        if out=$("$kubectl" scale statefulset "$statefulset" --replicas=0 2>&1); then\n'
        '            log "scaled statefulset/$statefulset to 0 replicas: $out"\n'
        '            return 0\n'
        '        fi\n'
        '        case "$out" in\n'
        "            *'(NotFound)'*)\n"
        '                log "statefulset/$statefulset is already gone"\n'
        '                return 0\n'
        '                ;;\n'
        '        esac\n'
        '        warn "kubectl: $out"\n'
        '        if [ "$attempt" -ge "$scale_attempts" ]; then\n'
        '            printf \'cannot scale statefulset/%s to 0 after %s attempts\\n\' "$statefulset" "$attempt" >&2\n'
        '            return 1\n'
        '        fi\n'
        '        attempt=$((attempt + 1))\n'
        '        sleep "$interval"\n'
        '    done\n'
        '}\n'
        '\n'
        'adopt\n'
        'log "waiting for job/$launcher_job to finish (polling every ${interval}s)"\n'
        'wait_for_launcher\n'
        'log "$reason: scaling the workers down"\n'
        'scale_down || exit 1\n'
        'if [ "$adopted" = no ]; then\n'
        '    adopt\n'
        'fi\n'
        'unbind\n'
        'exit 0\n'
    )
    return "".join(out)


def render_discover_hosts_sh(values: dict[str, Any]) -> str:
    out: list[str] = []
    out.append('#!/bin/sh\n')
    for host in values['hosts']:
        out.append('echo ')
        out.append(str(quote(str(host))))
        out.append('\n')
    return "".join(out)


def render_hostfile(values: dict[str, Any]) -> str:
    out: list[str] = []
    for host in values['hosts']:
        out.append(str(host))
        out.append(str(values['separator']))
        out.append(str(values['slots']))
        out.append('\n')
    return "".join(out)


def render_kubexec_jobset_sh(values: dict[str, Any]) -> str:
    out: list[str] = []
    out.append(
        '#!/bin/sh\n'
        "# kubexec (rendered by mpigen, jobset target): Open MPI's rsh agent. The hostfile names each host as\n"
        "# the Job controller names its pod's hostname, <job>-<replicated job>-0-<index>; the pod itself has a\n"
        '# random suffix, so it is looked up by its labels: this JobSet, that replicated job and index, the\n'
        "# launcher's own restart attempt (a pod of an earlier attempt may still be terminating), Running.\n"
        'set -eu\n'
        'host=$1\n'
        'shift\n'
        'case "$host" in\n'
    )
    out.append(str(values['launcher_host_prefix']))
    out.append('*) replicated_job=')
    out.append(str(quote(str(values['launcher_job']))))
    out.append(
        ' ;;\n'
        '*) replicated_job='
    )
    out.append(str(quote(str(values['worker_job']))))
    out.append(
        ' ;;\n'
        'esac\n'
        'index=${host##*-}\n'
        'pod=$('
    )
    out.append(str(quote(str(values['kubectl']))))
    out.append(' get pods --selector=')
    out.append(str(quote(str(values['selector']))))
    out.append('",')
    out.append(str(values['job_label']))
    out.append('=$replicated_job,')
    out.append(str(values['index_label']))
    out.append('=$index,')
    out.append(str(values['attempt_label']))
    out.append(
        '=${MPIGEN_RESTART_ATTEMPT}" --field-selector=status.phase=Running --output=name | head -n 1)\n'
        'if [ -z "$pod" ]; then\n'
        '  echo "kubexec.sh: no Running pod for host $host in restart attempt ${MPIGEN_RESTART_ATTEMPT}" >&2\n'
        '  exit 1\n'
        'fi\n'
        'exec '
    )
    out.append(str(quote(str(values['kubectl']))))
    out.append(' exec "$pod"')
    if values['container']:
        out.append(' --container ')
        out.append(str(quote(str(values['container']))))
    out.append(' -- /bin/sh -c "$*"\n')
    return "".join(out)


def render_kubexec_sh(values: dict[str, Any]) -> str:
    out: list[str] = []
    out.append(
        '#!/bin/sh\n'
        'set -x\n'
        'POD_NAME=$1\n'
    )
    if values['skip_options']:
        out.append(
            'while [ "${POD_NAME%"${POD_NAME#?}"}" = "-" ]\n'
            'do\n'
            'shift\n'
            'POD_NAME=$1\n'
            'done\n'
        )
    out.append('shift\n')
    out.append(str(quote(str(values['kubectl']))))
    out.append(' exec "${POD_NAME}"')
    if values['container']:
        out.append(' --container ')
        out.append(str(quote(str(values['container']))))
    out.append(' -- /bin/sh -c "$*"\n')
    return "".join(out)


def render_ssh_keygen_sh(values: dict[str, Any]) -> str:
    out: list[str] = []
    out.append(
        '#!/bin/sh\n'
        '# ssh-keygen (rendered by mpigen): runs in the Job that gives the job its SSH key pair. The init\n'
        "# container has generated a fresh pair into the keys folder; this stores it into the job's Secret,\n"
        '# once: a Secret that already holds a private key keeps it (re-applying the job, or a retry, never\n'
        "# replaces keys), and the patch carries the Secret's resourceVersion, so of two writers only one wins.\n"
        '# The key itself is never printed.\n'
        "# Exit 0: the Secret holds keys. Exit 1: it could not be written; the Job's backoffLimit retries.\n"
        'set -u\n'
        '\n'
        'kubectl='
    )
    out.append(str(quote(str(values['kubectl']))))
    out.append(
        '\n'
        'secret='
    )
    out.append(str(quote(str(values['secret']))))
    out.append(
        '\n'
        'self_job='
    )
    out.append(str(quote(str(values['self_job']))))
    out.append(
        '\n'
        'self_rbac='
    )
    out.append(str(quote(str(values['self_rbac']))))
    out.append(
        '\n'
        'keys='
    )
    out.append(str(quote(str(values['keys_dir']))))
    out.append(
        '\n'
        'interval='
    )
    out.append(str(quote(str(values['interval_seconds']))))
    out.append(
        '\n'
        'attempts='
    )
    out.append(str(quote(str(values['attempts']))))
    out.append(
        '\n'
        'version_and_key='
    )
    out.append(str(quote(str(values['version_and_key']))))
    out.append(
        '\n'
        'uid_format='
    )
    out.append(str(quote(str(values['uid_format']))))
    out.append(
        '\n'
        'owner_patch_head='
    )
    out.append(str(quote(str(values['owner_patch_head']))))
    out.append(
        '\n'
        'owner_patch_tail='
    )
    out.append(str(quote(str(values['owner_patch_tail']))))
    out.append(
        '\n'
        '\n'
        'log() {\n'
        '    printf \'%s\\n\' "$*"\n'
        '}\n'
        '\n'
        'warn() {\n'
        '    printf \'warning: %s\\n\' "$*" >&2\n'
        '}\n'
        '\n'
        '# adopt: make this Job the owner of its ServiceAccount and Role, so that the garbage collector\n'
        '# deletes them with this Job once its ttlSecondsAfterFinished has passed (its RoleBinding, which it\n'
        '# may not patch, it deletes itself when done: unbind). Best effort.\n'
        'adopt() {\n'
        '    if ! uid=$("$kubectl" get job "$self_job" -o "$uid_format" 2>&1); then\n'
        '        warn "cannot read the uid of job/$self_job, its RBAC objects stay behind: $uid"\n'
        '        return 0\n'
        '    fi\n'
        '    case "$uid" in\n'
        "        '' | *[!0-9a-f-]*)\n"
        '            warn "job/$self_job has no usable uid (\'$uid\'), its RBAC objects stay behind"\n'
        '            return 0\n'
        '            ;;\n'
        '    esac\n'
        '    for kind in serviceaccount role; do\n'
        '        if out=$("$kubectl" patch "$kind" "$self_rbac" --type=merge -p "$owner_patch_head$uid$owner_patch_tail" 2>&1); then\n'
        '            log "$kind/$self_rbac is now owned by job/$self_job"\n'
        '        else\n'
        '            warn "cannot adopt $kind/$self_rbac, it stays behind after job/$self_job: $out"\n'
        '        fi\n'
        '    done\n'
        '}\n'
        '\n'
        "# unbind: delete this Job's own RoleBinding, its last call to the API (it takes the Job's rights).\n"
        'unbind() {\n'
        '    if out=$("$kubectl" delete rolebinding "$self_rbac" --wait=false 2>&1); then\n'
        '        log "deleted rolebinding/$self_rbac"\n'
        '    else\n'
        '        warn "cannot delete rolebinding/$self_rbac, it stays behind after job/$self_job: $out"\n'
        '    fi\n'
        '}\n'
        '\n'
        '# encode FILE: the file in base64 on one line (busybox and coreutils base64 wrap their output).\n'
        'encode() {\n'
        '    base64 <"$1" | tr -d \'\\n\'\n'
        '}\n'
        '\n'
        '# store: one attempt. Returns 0 when the Secret holds keys (ours or earlier ones), 1 to try again.\n'
        'store() {\n'
        '    if ! out=$("$kubectl" get secret "$secret" -o "$version_and_key" 2>&1); then\n'
        '        warn "kubectl: $out"\n'
        '        return 1\n'
        '    fi\n'
        '    version=${out%% *}\n'
        '    case "$version" in\n'
        "        '' | *[!0-9]*)\n"
        '            warn "secret/$secret has no usable resourceVersion"\n'
        '            return 1\n'
        '            ;;\n'
        '    esac\n'
        '    if [ -n "${out#"$version"}" ] && [ "${out#"$version"}" != \' \' ]; then\n'
        '        log "secret/$secret already holds a key pair: kept"\n'
        '        return 0\n'
        '    fi\n'
        '    if ! private=$(encode "$keys/id") || ! public=$(encode "$keys/id.pub") || [ -z "$private" ] || [ -z "$public" ]; then\n'
        '        warn "no key pair in $keys (did the ssh-keygen init container run?)"\n'
        '        return 1\n'
        '    fi\n'
        '    patch="{\\"metadata\\":{\\"resourceVersion\\":\\"$version\\"},\\"data\\":{\\"ssh-privatekey\\":\\"$private\\",\\"ssh-publickey\\":\\"$public\\"}}"\n'
        '    if out=$("$kubectl" patch secret "$secret" --type=merge -p "$patch" 2>&1); then\n'
        '        log "stored a new key pair in secret/$secret"\n'
        '        return 0\n'
        '    fi\n'
        '    warn "kubectl: $out"\n'
        '    return 1\n'
        '}\n'
        '\n'
        'adopt\n'
        'attempt=1\n'
        'until store; do\n'
        '    if [ "$attempt" -ge "$attempts" ]; then\n'
        '        printf \'cannot store the key pair in secret/%s after %s attempts\\n\' "$secret" "$attempt" >&2\n'
        '        exit 1\n'
        '    fi\n'
        '    attempt=$((attempt + 1))\n'
        '    sleep "$interval"\n'
        'done\n'
        'unbind\n'
        'exit 0\n'
    )
    return "".join(out)


def render_wait_for_workers_sh(values: dict[str, Any]) -> str:
    out: list[str] = []
    out.append(
        '#!/bin/sh\n'
        '# wait-for-workers (rendered by mpigen): runs as an init container of the launcher pod and returns\n'
        '# once every worker pod is Ready, so that mpirun finds all its hosts. The mpi-operator created the\n'
        "# launcher only after that; here the launcher waits itself. The launcher's Role allows `get` on the\n"
        '# named worker pods only (no list, no watch), so the pods are polled by name.\n'
        "# Exit 0: all workers Ready. Exit 1: timed out; the launcher Job's backoffLimit decides what follows.\n"
        'set -u\n'
        '\n'
        'kubectl='
    )
    out.append(str(quote(str(values['kubectl']))))
    out.append(
        '\n'
        'prefix='
    )
    out.append(str(quote(str(values['pod_prefix']))))
    out.append(
        '\n'
        'workers='
    )
    out.append(str(quote(str(values['workers']))))
    out.append(
        '\n'
        'last_pod='
    )
    out.append(str(quote(str(values['last_pod']))))
    out.append(
        '\n'
        'timeout='
    )
    out.append(str(quote(str(values['timeout_seconds']))))
    out.append(
        '\n'
        'interval='
    )
    out.append(str(quote(str(values['interval_seconds']))))
    out.append(
        '\n'
        'clock_step='
    )
    out.append(str(quote(str(values['clock_step']))))
    out.append(
        '\n'
        'batch_size='
    )
    out.append(str(quote(str(values['batch_size']))))
    out.append(
        '\n'
        'columns='
    )
    out.append(str(quote(str(values['ready_columns']))))
    out.append(
        '\n'
        'show_names=10\n'
        'max_errors=20\n'
        "nl='\n"
        "'\n"
        '# POSIX sh has no local variables: every function below uses names no other function sets.\n'
        '\n'
        '# Indices of the workers not yet seen Ready, each followed by one space: "0 1 2 ".\n'
        "pending=''\n"
        'npending=0\n'
        'while [ "$npending" -lt "$workers" ]; do\n'
        '    pending="$pending$npending "\n'
        '    npending=$((npending + 1))\n'
        'done\n'
        '\n'
        '# Seconds since start from `date +%s`; without a usable clock, the seconds slept so far.\n'
        'slept=0\n'
        "start=$(date +%s 2>/dev/null) || start=''\n"
        'elapsed=0\n'
        'update_elapsed() {\n'
        "    now=$(date +%s 2>/dev/null) || now=''\n"
        '    case "$start$now" in\n'
        "        '' | *[!0-9]*) elapsed=$slept ;;\n"
        '        *) elapsed=$((now - start)) ;;\n'
        '    esac\n'
        '}\n'
        '\n'
        '# Show each distinct kubectl error once (NotFound is no error here: that pod just is not ready).\n'
        "seen_errors=''\n"
        'errors_shown=0\n'
        'report() {\n'
        '    case "$nl$seen_errors" in\n'
        '        *"$nl$1$nl"*) return 0 ;;\n'
        '    esac\n'
        '    seen_errors="$seen_errors$1$nl"\n'
        '    errors_shown=$((errors_shown + 1))\n'
        '    if [ "$errors_shown" -le "$max_errors" ]; then\n'
        '        printf \'kubectl: %s\\n\' "$1" >&2\n'
        '    elif [ "$errors_shown" -eq $((max_errors + 1)) ]; then\n'
        "        printf 'kubectl: more errors follow; not shown\\n' >&2\n"
        '    fi\n'
        '}\n'
        '\n'
        "# query NAME...: one kubectl call, one GET per named pod; sets $ready to the Ready ones' indices.\n"
        'query() {\n'
        "    ready=' '\n"
        '    out=$("$kubectl" get pod "$@" --no-headers -o "$columns" 2>&1) || true\n'
        '    while IFS= read -r line; do\n'
        '        case "$line" in\n'
        '            "$prefix"-*\' True\') name=${line%% *}; ready="$ready${name#"$prefix"-} " ;;\n'
        '            "$prefix"-*\' \'*) ;;\n'
        "            *'(NotFound)'* | '') ;;\n"
        '            *) report "$line" ;;\n'
        '        esac\n'
        '    done <<EOF\n'
        '$out\n'
        'EOF\n'
        '}\n'
        '\n'
        '# keep INDICES: append the indices (each followed by a space) not in $ready to $next.\n'
        'keep() {\n'
        '    rest=$1\n'
        '    while [ -n "$rest" ]; do\n'
        '        i=${rest%% *}\n'
        '        rest=${rest#* }\n'
        '        case "$ready" in\n'
        '            *" $i "*) ;;\n'
        '            *)\n'
        '                next="$next$i "\n'
        '                npending=$((npending + 1))\n'
        '                ;;\n'
        '        esac\n'
        '    done\n'
        '}\n'
        '\n'
        '# poll: check every pending pod, batch_size names per kubectl call; keep those still not Ready.\n'
        'poll() {\n'
        "    next=''\n"
        '    npending=0\n'
        "    batch=''\n"
        '    set --\n'
        '    todo=$pending\n'
        '    while [ -n "$todo" ]; do\n'
        '        j=${todo%% *}\n'
        '        todo=${todo#* }\n'
        '        batch="$batch$j "\n'
        '        set -- "$@" "$prefix-$j"\n'
        '        if [ "$#" -ge "$batch_size" ] || [ -z "$todo" ]; then\n'
        '            query "$@"\n'
        '            keep "$batch"\n'
        "            batch=''\n"
        '            set --\n'
        '        fi\n'
        '    done\n'
        '    pending=$next\n'
        '}\n'
        '\n'
        '# describe: "3/8 workers: job-worker-2 job-worker-5 job-worker-7", at most $show_names names.\n'
        'describe() {\n'
        "    listed=''\n"
        '    nlisted=0\n'
        '    unlisted=$pending\n'
        '    while [ -n "$unlisted" ] && [ "$nlisted" -lt "$show_names" ]; do\n'
        '        listed="$listed $prefix-${unlisted%% *}"\n'
        '        unlisted=${unlisted#* }\n'
        '        nlisted=$((nlisted + 1))\n'
        '    done\n'
        '    if [ "$npending" -gt "$nlisted" ]; then\n'
        '        listed="$listed and $((npending - nlisted)) more"\n'
        '    fi\n'
        '    printf \'%s/%s workers:%s\' "$npending" "$workers" "$listed"\n'
        '}\n'
        '\n'
        'echo "waiting for $workers workers to be Ready ($prefix-0 .. $last_pod, timeout ${timeout}s)"\n'
        "shown=''\n"
        'shown_at=0\n'
        'while :; do\n'
        '    poll\n'
        '    if [ -z "$pending" ]; then\n'
        '        echo "all $workers workers ready"\n'
        '        exit 0\n'
        '    fi\n'
        '    update_elapsed\n'
        '    if [ "$elapsed" -ge "$timeout" ]; then\n'
        '        echo "timed out after ${elapsed}s; not Ready: $(describe)" >&2\n'
        '        exit 1\n'
        '    fi\n'
        '    if [ "$npending" != "$shown" ] || [ $((elapsed - shown_at)) -ge 30 ]; then\n'
        '        echo "waiting for $(describe) (${elapsed}s)"\n'
        '        shown=$npending\n'
        '        shown_at=$elapsed\n'
        '    fi\n'
        '    sleep "$interval"\n'
        '    slept=$((slept + clock_step))\n'
        'done\n'
    )
    return "".join(out)


TEMPLATES: dict[str, Callable[[dict[str, Any]], str]] = {
    'cleanup.sh.j2': render_cleanup_sh,
    'discover_hosts.sh.j2': render_discover_hosts_sh,
    'hostfile.j2': render_hostfile,
    'kubexec-jobset.sh.j2': render_kubexec_jobset_sh,
    'kubexec.sh.j2': render_kubexec_sh,
    'ssh-keygen.sh.j2': render_ssh_keygen_sh,
    'wait-for-workers.sh.j2': render_wait_for_workers_sh,
}


@stand_in
def render(template: str, values: dict[str, Any]) -> str:
    """`template` rendered with `values` by its compiled function."""
    return TEMPLATES[template](values)
