#!/usr/bin/env bash
# Group 3 of BENCHMARKS.md, second half: the `cargo check` time of a small user crate with a 16-variant
# `#[derive(Dispatch)]` enum, against the same crate with the derive (and its attributes) removed.
#
# Usage: dispatch-derive/benches/check_time.sh [runs]        (default 10 runs of each crate)
#
# Both crates live in a temporary directory, depend on this checkout's dispatch-core by path and share one target
# directory ($CHECK_TIME_TARGET_DIR, by default $CARGO_TARGET_DIR/check-time), so dependencies are checked once,
# before timing. Each run touches the crate's lib.rs and times `cargo check` of that crate alone; the two crates
# alternate run by run, so a change in machine load hits both. Prints every time, the medians and their ratio.
set -euo pipefail

runs="${1:-10}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CHECK_TIME_TARGET_DIR:-${CARGO_TARGET_DIR:-$repo/target}/check-time}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

variants=16

# The enum, with or without the derive: the variants alternate between candle and ndarray devices.
write_crate() {
    local name="$1" derive="$2" dir="$work/$1"
    mkdir -p "$dir/src"
    # The workspace's lock file, so that the dependencies are the versions the workspace builds.
    cp "$repo/Cargo.lock" "$dir/Cargo.lock"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "$name"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
dispatch-core = { path = "$repo/dispatch-core" }

[workspace]
EOF
    {
        echo "use dispatch_core::backends::{CandleDevice, NdArrayDevice};"
        if [[ "$derive" == yes ]]; then
            echo "use dispatch_core::backends::{Candle, NdArray};"
            echo "use dispatch_core::Dispatch;"
            echo
            echo "#[derive(Clone, Debug, PartialEq, Dispatch)]"
        else
            echo
            echo "#[derive(Clone, Debug, PartialEq)]"
        fi
        echo "pub enum Device {"
        for ((index = 0; index < variants; index++)); do
            if ((index % 2 == 0)); then backend=Candle; else backend=NdArray; fi
            if [[ "$derive" == yes ]]; then echo "    #[backend($backend)] #[dispatch(no_from)]"; fi
            echo "    ${backend}${index}(${backend}Device),"
        done
        echo "}"
        echo
        echo "pub fn describe(device: &Device) -> String {"
        echo "    format!(\"{device:?}\")"
        echo "}"
    } >"$dir/src/lib.rs"
}

write_crate with_derive yes
write_crate without_derive no

check() {
    CARGO_TARGET_DIR="$target" cargo check --quiet --offline --manifest-path "$work/$1/Cargo.toml"
}

# Warm-up: checks dispatch-core and its dependencies, and fails loudly if either crate does not compile.
check with_derive
check without_derive

median() {
    sort -n | awk '{ values[NR] = $1 } END { if (NR % 2) print values[(NR + 1) / 2]; else print (values[NR / 2] + values[NR / 2 + 1]) / 2 }'
}

declare -A times
for ((run = 1; run <= runs; run++)); do
    for name in with_derive without_derive; do
        touch "$work/$name/src/lib.rs"
        start=$(date +%s.%N)
        check "$name"
        end=$(date +%s.%N)
        times[$name]+="$(echo "$end - $start" | bc) "
    done
done

echo "cargo check of a user crate with a ${variants}-variant enum, ${runs} runs each (seconds):"
for name in with_derive without_derive; do
    echo "  $name: ${times[$name]}"
done
with=$(tr ' ' '\n' <<<"${times[with_derive]}" | grep . | median)
without=$(tr ' ' '\n' <<<"${times[without_derive]}" | grep . | median)
echo "median with derive:    $with s"
echo "median without derive: $without s"
echo "ratio with/without:    $(echo "scale=3; $with / $without" | bc)"
echo "difference:            $(echo "scale=3; $with - $without" | bc) s"
