# Sourced by the drivers that regenerate one section of BENCHMARKS.md (kernels.sh,
# contention.sh, operator-calls.sh, build-time.sh): reads their shared options into skip_runs
# and update, and gives them emit_section.
#   --skip-runs    render the section from the files of an earlier run
#   --update FILE  replace the section between its markers in FILE instead of printing it
#   -h, --help     print the driver's header comment (lines 2 to the first blank one)
# Usage: source bench/speed/section_args.sh NAME "$@"
section_name=$1
shift
skip_runs=0
update=""
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-runs) skip_runs=1; shift ;;
    --update) update=${2:?--update needs a file}; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$section_name: unknown argument $1" >&2; exit 2 ;;
  esac
done

# emit_section FILE [--before HEADING]: the section the driver wrote to FILE, printed, or with
# --update put in place between its markers (bench/marked_section.py, which takes the rest of
# the arguments); FILE is removed either way.
emit_section() {
  local file=$1
  shift
  if [ -n "$update" ]; then
    python3 bench/marked_section.py "$update" "$section_name" "$file" "$@"
  else
    cat "$file"
  fi
  rm -f "$file"
}
