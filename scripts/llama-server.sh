#!/bin/sh
# Builds, once, the real model server the LLM judge's tests talk to:
# llama.cpp's llama-server, compiled offline from the source bundle the npm
# package node-llama-cpp ships (llama/gitRelease.bundle), and a tiny
# llama-architecture GGUF with random weights (2 layers, 64 dims, the
# bundle's SentencePiece vocab) made by scripts/tiny-gguf.py with the
# bundle's gguf-py. Random weights cannot judge; they answer, and under a
# response_format schema they answer schema-valid JSON, which is what the
# tests need (decision quality is make judge-eval's job).
#
#   llama-server.sh          build it unless cached; print its directory
#   llama-server.sh --path   print its directory if it is built, else exit 1
#
# The directory holds bin/llama-server, tiny.gguf and tiny.steer.json. The cache lives outside
# the checkout ($ANTIDRIFT_LLAMA_CACHE, default /var/cache/antidrift), keyed by
# the package version, the build flags and the generator script, so a warm
# machine never rebuilds and a changed recipe never reuses a stale build. A
# cold build takes about 9 minutes on 2 idle cores (46 on 2 shared with other
# builds). Needs root the first time only to apt-get install cmake,
# python3-numpy and python3-yaml (gguf-py's imports) when they are missing.
#
# GGML_NATIVE=OFF: the cached binary runs on any x86-64 machine the cache is
# copied to (a 64-dim model does not need AVX to answer in milliseconds).
set -eu

version=3.21.1
flags="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_UI=OFF
-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF
-DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON"

here=$(cd "$(dirname "$0")" && pwd)
cache=${ANTIDRIFT_LLAMA_CACHE:-/var/cache/antidrift}
serverkey=$(printf '%s %s\n' "$version" "$(echo $flags)" | sha256sum | cut -c1-12)
key=$( (printf '%s\n' "$serverkey"; cat "$here/tiny-gguf.py") | sha256sum | cut -c1-12)
out=$cache/llama-$key
ready=$out/.antidrift-ready

if [ -e "$ready" ]; then
	echo "$out"
	exit 0
fi
if [ "${1:-}" = --path ]; then
	echo "the test model server is not built: run scripts/llama-server.sh (about 9 minutes on 2 cores, once)" >&2
	exit 1
fi

need=""
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v g++ >/dev/null 2>&1 || need="$need g++"
command -v npm >/dev/null 2>&1 || need="$need npm"
command -v git >/dev/null 2>&1 || need="$need git"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || need="$need python3-numpy"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || need="$need python3-yaml"
if [ -n "$need" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
	else
		echo "building the test model server needs:$need (sudo apt-get install -y$need)" >&2
		exit 1
	fi
fi

mkdir -p "$cache"
# The build tree is kept (keyed by the server flags alone) so an interrupted
# build resumes and a changed model generator does not recompile llama.cpp.
work=$cache/llama-build-$serverkey
mkdir -p "$work"
start=$(date +%s)
if [ ! -e "$work/src/.antidrift-unpacked" ]; then
	echo "unpacking node-llama-cpp@$version's llama.cpp bundle into $work" >&2
	rm -rf "$work/pkg" "$work/src"
	mkdir -p "$work/pkg"
	# npm pack only downloads the tarball: no install scripts run, nothing
	# prebuilt is fetched.
	(cd "$work/pkg" && npm pack --silent "node-llama-cpp@$version" >/dev/null)
	tar -xzf "$work/pkg/node-llama-cpp-$version.tgz" -C "$work/pkg" package/llama/gitRelease.bundle
	git clone -q "$work/pkg/package/llama/gitRelease.bundle" "$work/src" 2>/dev/null
	rm -rf "$work/pkg"
	touch "$work/src/.antidrift-unpacked"
fi
if [ ! -x "$work/build/bin/llama-server" ]; then
	echo "building llama-server in $work/build (about 9 minutes on 2 cores, once)" >&2
	# shellcheck disable=SC2086
	cmake -S "$work/src" -B "$work/build" $flags >"$work/cmake.log" 2>&1 || { tail -30 "$work/cmake.log" >&2; exit 1; }
	cmake --build "$work/build" --target llama-server -j2 >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }
fi

tmp=$out.partial
rm -rf "$tmp"
mkdir -p "$tmp/bin"
cp "$work/build/bin/llama-server" "$tmp/bin/llama-server"
PYTHONPATH="$work/src/gguf-py" /usr/bin/python3 "$here/tiny-gguf.py" \
	"$work/src/models/ggml-vocab-llama-spm.gguf" "$tmp/tiny.gguf" >&2
rm -rf "$out"
mv "$tmp" "$out"
touch "$ready"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out"
