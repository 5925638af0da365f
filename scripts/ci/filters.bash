# Sourced by the CI workflow's steps (.github/workflows/nightly.yml): the filters the run was
# started with, as fabuild arguments in the array `filters`. Every step that selects cells
# (the plan, each build job, the summary) uses the same ones, so that a shard K/N means the
# same cells everywhere. Each value reaches fabuild as one argument, never through the shell.
#   FILTER_FA, FILTER_TORCH, FILTER_CUDA, FILTER_PYTHON, FILTER_PLATFORM, FILTER_ONLY
filters=()
[ -z "${FILTER_FA:-}" ] || filters+=(--fa "$FILTER_FA")
[ -z "${FILTER_TORCH:-}" ] || filters+=(--torch "$FILTER_TORCH")
[ -z "${FILTER_CUDA:-}" ] || filters+=(--cuda "$FILTER_CUDA")
[ -z "${FILTER_PYTHON:-}" ] || filters+=(--python "$FILTER_PYTHON")
[ -z "${FILTER_PLATFORM:-}" ] || filters+=(--platform "$FILTER_PLATFORM")
[ -z "${FILTER_ONLY:-}" ] || filters+=(--only "$FILTER_ONLY")
