#!/bin/bash
# Builds the Lambda base image that `sam local invoke --skip-pull-image` looks for, from
# Debian's and PyPI's packages alone (no container registry is reachable here):
#
#   infra/lambda_base_image.sh python3.13 arm64   ->  public.ecr.aws/lambda/python:3.13-arm64
#
# Parts: a Debian root file system (debootstrap, the suite whose python3 is the runtime's
# version), the runtime interface client (awslambdaric, PyPI wheel for the target machine)
# in /var/runtime, and /var/runtime/bootstrap, where the Runtime Interface Emulator that SAM
# CLI adds to the image (samcli/local/rapid) starts the runtime. Paths are those of the
# managed images: /var/task (code), /opt (layers), /var/runtime, /var/lang/bin/python3.
# A foreign architecture runs under qemu-user-static through binfmt_misc (registered here).
#
# Cached: the image carries the sha256 of this script as a label (a matching image is kept),
# and the debootstrapped system is kept as a tar in $XMEMO_IMAGE_CACHE.
# Needs root, docker (a running daemon), debootstrap, and qemu-user-static for a foreign arch.
set -euo pipefail

runtime=${1:?usage: $0 RUNTIME ARCH (e.g. python3.13 arm64)}
arch=${2:?usage: $0 RUNTIME ARCH (e.g. python3.13 arm64)}
python=${PYTHON:-python3}                 # a Python with pip, to fetch the awslambdaric wheel
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${XMEMO_IMAGE_CACHE:-/var/cache/xmemo-lambda-image}
ric_version=4.2.2

version=${runtime#python}
case "$version" in
  3.13) suite=trixie ;;                   # Debian 13's python3 is 3.13
  3.11) suite=bookworm ;;                 # Debian 12's python3 is 3.11
  *) echo "no Debian suite ships Python $version as python3 (3.13: trixie, 3.11: bookworm)" >&2; exit 2 ;;
esac
case "$arch" in
  arm64) deb_arch=arm64 wheel_platform=manylinux2014_aarch64 qemu=aarch64 ;;
  x86_64) deb_arch=amd64 wheel_platform=manylinux2014_x86_64 qemu=x86_64 ;;
  *) echo "unknown Lambda architecture $arch (arm64 or x86_64)" >&2; exit 2 ;;
esac
tag="public.ecr.aws/lambda/python:${version}-${arch}"  # samcli Runtime.get_image_name_tag
recipe=$(sha256sum "$0" | cut -c1-16)

if [ "$(docker image inspect --format '{{index .Config.Labels "xmemo.recipe"}}' "$tag" 2>/dev/null)" = "$recipe" ]; then
  echo "$tag: cached (recipe $recipe)"
  exit 0
fi

# A foreign architecture: register qemu's interpreter with the F flag (opened now, so it also
# serves inside containers and chroots).
if [ "$deb_arch" != "$(dpkg --print-architecture)" ]; then
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  if [ ! -e "/proc/sys/fs/binfmt_misc/qemu-$qemu" ]; then
    conf="/usr/lib/binfmt.d/qemu-$qemu.conf"
    [ -f "$conf" ] || { echo "$conf missing: apt-get install qemu-user-static" >&2; exit 1; }
    cat "$conf" > /proc/sys/fs/binfmt_misc/register
  fi
fi

work=$(mktemp -d /var/tmp/xmemo-lambda-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
mkdir -p "$cache/debs" "$root"
started=$(date +%s)
# The debootstrapped system is kept too (the slow part: dpkg configures it under emulation).
base="$cache/debootstrap-$suite-$deb_arch.tar"
if [ -f "$base" ]; then
  echo "debootstrap $suite ($deb_arch): cached in $base"
else
  echo "debootstrap $suite ($deb_arch) ..."
  debootstrap --variant=minbase --arch="$deb_arch" --include=python3,ca-certificates \
    --cache-dir="$cache/debs" "$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -30 "$work/debootstrap.log" >&2; exit 1; }
  tar -C "$root" -cf "$base.partial" . && mv "$base.partial" "$base"
  echo "debootstrap done in $(( $(date +%s) - started )) s"
fi
tar -C "$root" -xf "$base"

got=$(chroot "$root" /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$got" = "$version" ] || { echo "$suite brought Python $got, not $version" >&2; exit 1; }

mkdir -p "$root/var/task" "$root/opt" "$root/var/runtime" "$root/var/lang/bin" "$root/tmp"
ln -sf /usr/bin/python3 "$root/var/lang/bin/python3"
"$python" -m pip install -q --disable-pip-version-check --no-compile --target "$root/var/runtime" \
  --platform "$wheel_platform" --python-version "$version" --implementation cp --only-binary=:all: \
  "awslambdaric==$ric_version"
cat > "$root/var/runtime/bootstrap" <<EOF
#!/bin/sh
# Started by the Runtime Interface Emulator as Lambda starts a managed runtime; the handler
# (e.g. app.lambda_handler) arrives in _HANDLER. sys.path as on Lambda: the function's code,
# then the layers' python/ folders, then the runtime.
export PYTHONPATH="/var/task:/opt/python/lib/python${version}/site-packages:/opt/python:/var/runtime"
exec /var/lang/bin/python3 -m awslambdaric "\$_HANDLER"
EOF
chmod 755 "$root/var/runtime/bootstrap"
rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/usr/share/doc "$root"/usr/share/man

# `docker load` of an image archive written here, because `docker import` labels the image with
# the engine's own architecture while SAM CLI asks the engine for linux/$arch.
image="$work/image"
mkdir -p "$image"
tar -C "$root" -cf "$image/layer.tar" .
layer_sha=$(sha256sum "$image/layer.tar" | cut -d' ' -f1)
variant=$([ "$arch" = arm64 ] && echo '"variant": "v8",' || true)
cat > "$image/config.json" <<EOF
{"architecture": "$deb_arch", $variant "os": "linux", "created": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "config": {"Env": ["LANG=C.UTF-8", "TZ=:/etc/localtime", "PATH=/var/lang/bin:/usr/local/bin:/usr/bin:/bin:/opt/bin",
                    "LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib",
                    "LAMBDA_TASK_ROOT=/var/task", "LAMBDA_RUNTIME_DIR=/var/runtime", "AWS_EXECUTION_ENV=AWS_Lambda_$runtime"],
            "WorkingDir": "/var/task", "Entrypoint": ["/var/runtime/bootstrap"], "Labels": {"xmemo.recipe": "$recipe"}},
 "rootfs": {"type": "layers", "diff_ids": ["sha256:$layer_sha"]}}
EOF
printf '[{"Config": "config.json", "RepoTags": ["%s"], "Layers": ["layer.tar"]}]\n' "$tag" > "$image/manifest.json"
tar -C "$image" -c manifest.json config.json layer.tar | docker load -q > /dev/null
echo "$tag: built in $(( $(date +%s) - started )) s (recipe $recipe)"
