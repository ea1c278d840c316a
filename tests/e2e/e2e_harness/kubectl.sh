#!/bin/sh
# Fake kubectl for the mpigen end-to-end harness: the only stand-in in it.
#
# Implements just what the rendered pods call:
#   kubectl exec [-i|--stdin] [-c NAME] POD -- CMD...   run CMD in POD's namespaces (clean env of the
#       pod's container); stdin is attached only with -i, as with the real one; exit code propagated,
#       with the real one's "command terminated with exit code N" on stderr.
#   kubectl get pod[s] POD -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
#       prints the pod's Ready condition as the test scripted it (True, False, empty), no newline.
# A pod that does not exist fails like the real one: `Error from server (NotFound): pods "NAME" not
# found`, exit 1. State lives in the harness's state dir, written into this file on delivery.
STATE=@STATE@
READY_JSONPATH='{.status.conditions[?(@.type=="Ready")].status}'

not_found() {
    echo "Error from server (NotFound): pods \"$1\" not found" >&2
    exit 1
}

usage() {
    echo "error: $* (fake kubectl of the mpigen e2e harness)" >&2
    exit 1
}

kubectl_exec() {
    stdin=
    pod=
    while [ $# -gt 0 ]; do
        case "$1" in
            --) shift; break ;;
            -i|--stdin) stdin=1 ;;
            -c|--container) shift ;;
            --container=*|-c=*) ;;
            -*) usage "exec: unsupported flag $1" ;;
            *) [ -n "$pod" ] && usage "exec: more than one pod" ; pod=$1 ;;
        esac
        shift
    done
    [ -n "$pod" ] || usage "exec: expected POD -- COMMAND"
    [ $# -gt 0 ] || usage "you must specify at least one command for the container"
    [ -x "$STATE/pods/$pod/enter" ] || not_found "$pod"
    if [ -n "$stdin" ]; then
        "$STATE/pods/$pod/enter" "$@"
    else
        "$STATE/pods/$pod/enter" "$@" </dev/null
    fi
    rc=$?
    [ $rc -eq 0 ] || echo "command terminated with exit code $rc" >&2
    exit $rc
}

# Pops the next scripted Ready value; the last one stays. "NotFound" scripts a missing pod.
next_ready() {
    file=$STATE/pods/$1/ready
    [ -f "$file" ] || return 1
    flock "$file" sh -c '
        value=$(head -n 1 "$1")
        if [ "$(wc -l <"$1")" -gt 1 ]; then
            tail -n +2 "$1" >"$1.next" && mv "$1.next" "$1"
        fi
        printf "%s" "$value"' sh "$file"
}

kubectl_get() {
    kind=$1
    case "$kind" in pod|pods|po) ;; *) usage "get: only pods are supported, got $kind" ;; esac
    shift
    pod=
    output=
    while [ $# -gt 0 ]; do
        case "$1" in
            -o|--output) shift; output=$1 ;;
            -o=*|--output=*) output=${1#*=} ;;
            -o*) output=${1#-o} ;;
            -*) usage "get: unsupported flag $1" ;;
            *) pod=$1 ;;
        esac
        shift
    done
    [ -n "$pod" ] || usage "get: expected a pod name"
    [ "$output" = "jsonpath=$READY_JSONPATH" ] || usage "get: only -o jsonpath=$READY_JSONPATH is supported"
    value=$(next_ready "$pod") || not_found "$pod"
    [ "$value" = NotFound ] && not_found "$pod"
    printf "%s" "$value"
}

case "$1" in
    exec) shift; kubectl_exec "$@" ;;
    get) shift; kubectl_get "$@" ;;
    *) usage "unsupported command: ${1:-<none>}" ;;
esac
