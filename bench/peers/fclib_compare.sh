#!/usr/bin/env bash
# bench/peers/fclib_compare.sh: stagger's solvers against Siconos numerics on the same FCLIB problems,
# exported from stagger's own scenes (`stagger export-fclib`, islands of at least 20 contacts), each
# solved from r = 0 to 1e-4 and to 1e-8 in the same natural-map error (docs/fclib.md).
#   - stagger: `stagger solve-fclib` (staggered projections and successive relaxation; the reference
#     implementation on the explicit sparse W, one thread; at most 1000 outer iterations);
#   - Siconos 4.4 (Debian's libsiconos-numerics-dev): FC3D_PFP, NSGS, NSN_AC and ADMM through
#     build/stagger_siconos_fclib (their default settings, iteration cap 100,000);
# every solve stopped after TIME_LIMIT seconds (default 30). Problems that r = 0 already solves
# (every contact separating) are left out of the profiles.
# Writes bench/results/<MACHINE>_cpu/fclib_compare.csv and the Dolan-More performance profiles
# fclib_profile.png (fraction of problems each solver solves within a factor tau of the fastest).
# The problems are kept in out/fclib_problems (reused; RERUN=1 exports them again). Run nothing else
# meanwhile: the figures are wall-clock times. PLOT_ONLY=1 redraws the profiles from the CSV.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ensure_packages.sh libfclib-dev libsiconos-numerics-dev gnuplot-nox python3
[ -f build/build.ninja ] || scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build --target stagger stagger_siconos_fclib
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
problems=out/fclib_problems
limit="${TIME_LIMIT:-30}"
mkdir -p "$out"

# scene step: structures (box stack, card house, catenary arch), a bunny pile, pours and shaken beds.
exports=("scenes/validation/box_stack.json 5" "scenes/validation/card_house.json 10"
         "scenes/validation/catenary_arch.json 5" "scenes/bunny_drop.json 800"
         "scenes/brazil_nut_small.json 400" "scenes/brazil_nut_small.json 450"
         "bench/scenes/spheres_pile_1k.json 100"
         "bench/scenes/spheres_pile_1k.json 200")
csv="$out/fclib_compare.csv"
if [ -n "${PLOT_ONLY:-}" ]; then :
elif [ -n "${RERUN:-}" ] || [ ! -d "$problems" ]; then
  rm -rf "$problems"
  for e in "${exports[@]}"; do
    read -r scene step <<< "$e"
    build/stagger export-fclib "$scene" --step "$step" --min-contacts 20 --out "$problems"
  done
fi
tmp="$csv.tmp.$$"
# One process per problem, solver and tolerance, every one stopped after $limit seconds (a solve
# stopped there, or one that ends unconverged, is a failure in the profile).
stagger_solve() {  # file method tolerance
  local row
  row=$(timeout "$limit" build/stagger solve-fclib "$1" --method "$2" --tolerance "$3" | tail -n +2) || true
  if [ -n "$row" ]; then echo "$row"; else echo "$1,,$2,$3,0,,,$limit,,"; fi
}
if [ -z "${PLOT_ONLY:-}" ]; then
  files=("$problems"/*.hdf5)
  echo "fclib_compare: ${#files[@]} problems"
  {
  echo "file,contacts,method,tolerance,converged,outer_iterations,inner_iterations,seconds,error,other_error"
  for f in "${files[@]}"; do
    for method in staggered successive_relaxation; do
      for tolerance in 0.0001 1e-08; do stagger_solve "$f" "$method" "$tolerance"; done
    done
    build/stagger_siconos_fclib "$f" --solver pfp --solver nsgs --solver nsn_ac --solver admm \
      --tolerance 0.0001 --tolerance 1e-08 --time-limit "$limit" | tail -n +2 || true
  done
  } | tee "$tmp"
  mv "$tmp" "$csv"
fi

# Performance profiles (Dolan & More 2002), one per tolerance: rho_s(tau) = share of problems that
# solver s solves within tau times the fastest solver's time on that problem.
python3 - "$csv" "$out" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
for tol in sorted({r["tolerance"] for r in rows}, key=float):
    times = collections.defaultdict(dict)  # problem -> solver -> seconds (converged only)
    solvers = []
    for r in rows:
        if r["tolerance"] != tol: continue
        if r["method"] not in solvers: solvers.append(r["method"])
        times[r["file"]].setdefault(r["method"], float("inf"))
        if r["converged"] == "1": times[r["file"]][r["method"]] = float(r["seconds"])
    trivial = {r["file"] for r in rows if r["method"] == "staggered" and r["inner_iterations"] == "0"}
    for p in trivial: times.pop(p, None)
    best = {p: min(t.values()) for p, t in times.items()}
    solved = [p for p in times if best[p] < float("inf")]
    taus = sorted({t / best[p] for p in solved for t in times[p].values() if t < float("inf")})
    with open(f"{sys.argv[2]}/.profile_{tol}.tmp", "w") as f:
        f.write("tau " + " ".join(solvers) + "\n")
        for tau in [1.0] + taus + [taus[-1] * 2 if taus else 2.0]:
            share = [sum(1 for p in times if times[p].get(s, float("inf")) <= tau * best[p]) / len(times) for s in solvers]
            f.write(f"{tau:.6g} " + " ".join(f"{x:.4f}" for x in share) + "\n")
    print(f"profile {tol}: {len(times)} problems ({len(trivial)} trivial ones left out), solved by at least one solver: {len(solved)}")
    for s in solvers:
        won = sum(1 for p in times if times[p].get(s, float("inf")) == best[p] < float("inf"))
        ok = sum(1 for p in times if times[p].get(s, float("inf")) < float("inf"))
        print(f"  {s}: solved {ok}, fastest on {won}")
PY
gnuplot <<GP
set terminal pngcairo size 1100,460 font ",10" noenhanced
set output "$out/fclib_profile.png"
set multiplot layout 1,2 title "FCLIB problems from stagger's scenes, solved from r = 0 ($machine; bench/peers/fclib_compare.sh)"
set logscale x 2
set xlabel "tau: within this factor of the fastest solver's time"
set ylabel "share of problems solved"
set yrange [0:1.05]
set key bottom right
do for [tol in "0.0001 1e-08"] {
  set title "natural-map error <= ".tol
  file = "$out/.profile_".tol.".tmp"
  plot for [c=2:7] file using 1:c with steps lw 2 title columnheader(c)
}
unset multiplot
GP
rm -f "$out"/.profile_*.tmp
echo "fclib_compare: $csv and $out/fclib_profile.png"
