#!/bin/bash
# Builds the Lambda base image that `sam local invoke --skip-pull-image` looks for, from
# Debian's and PyPI's packages alone (no container registry is reachable here):
#
#   infra/lambda_base_image.sh python3.13 arm64   ->  public.ecr.aws/lambda/python:3.13-arm64
#
# Parts: the files of Debian's python3.13 and its dependency closure, only extracted
# (`mmdebstrap --variant=extract`: no maintainer script, so nothing runs under qemu while
# building), libstdc++ (which manylinux wheels, awslambdaric's among them, expect of the
# system), dash and coreutils (SAM CLI's own image build runs `mv`, `chmod`, `cp` in it),
# the runtime interface client (awslambdaric, PyPI wheel for the target machine) and boto3
# (as the managed runtime has it: the stdlib-only PreToken function uses it) in /var/runtime, and /var/runtime/bootstrap, where the Runtime Interface Emulator that SAM
# CLI adds to the image (samcli/local/rapid) starts the runtime. Paths are those of the
# managed images: /var/task (code), /opt (layers), /var/runtime, /var/lang/bin/python3.
# What the skipped maintainer scripts would have done and Python needs is done here, on the
# host: the merged-/usr links, the CA bundle, and the byte-compiled standard library (by the
# host's CPython of the same minor version: an emulated cold start would otherwise compile
# it in every fresh container).
# A foreign architecture runs under qemu-user-static through binfmt_misc (registered here).
#
# Cached: the image carries the sha256 of this script as a label (a matching image is kept).
# Needs root, docker (a running daemon), mmdebstrap, python3.X (the runtime's version, with
# pip) on PATH, and qemu-user-static for a foreign arch.
set -euo pipefail

runtime=${1:?usage: $0 RUNTIME ARCH (e.g. python3.13 arm64)}
arch=${2:?usage: $0 RUNTIME ARCH (e.g. python3.13 arm64)}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ric_version=4.2.2
boto3_version=1.44.8                     # the managed python3.13 runtime carries boto3 in /var/runtime

version=${runtime#python}
case "$version" in
  3.13) suite=trixie ;;                   # Debian 13 ships Python 3.13
  3.11) suite=bookworm ;;                 # Debian 12 ships Python 3.11
  *) echo "no Debian suite ships Python $version (3.13: trixie, 3.11: bookworm)" >&2; exit 2 ;;
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

# The host's CPython of the runtime's version writes the .pyc files (same magic number).
host_python=$(command -v "python$version" || true)
[ -n "$host_python" ] && [ "$("$host_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$version" ] \
  || { echo "python$version must be on PATH (to byte-compile the image's standard library)" >&2; exit 1; }

# A foreign architecture: register qemu's interpreter with the F flag (opened now, so it also
# serves inside containers).
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
started=$(date +%s)
mmdebstrap --quiet --variant=extract --arch="$deb_arch" --include="python$version,libstdc++6,dash,coreutils,ca-certificates" \
  "$suite" "$root" "$mirror" > "$work/mmdebstrap.log" 2>&1 || { tail -30 "$work/mmdebstrap.log" >&2; exit 1; }
echo "extracted python$version and its dependencies ($suite $deb_arch) in $(( $(date +%s) - started )) s"
[ -x "$root/usr/bin/python$version" ] || { echo "$suite has no python$version" >&2; exit 1; }

# Done by maintainer scripts on a real install: the merged-/usr links (the ELF interpreter is
# /lib/ld-linux-*.so.1) and the CA bundle (update-ca-certificates).
for dir in bin sbin lib; do [ -e "$root/$dir" ] || ln -s "usr/$dir" "$root/$dir"; done
mkdir -p "$root/etc/ssl/certs"
cat "$root"/usr/share/ca-certificates/mozilla/*.crt > "$root/etc/ssl/certs/ca-certificates.crt"

mkdir -p "$root/var/task" "$root/opt" "$root/var/runtime" "$root/var/lang/bin" "$root/tmp"
chmod 1777 "$root/tmp"
ln -sf "/usr/bin/python$version" "$root/var/lang/bin/python3"
"$host_python" -m pip install -q --disable-pip-version-check --no-compile --target "$root/var/runtime" \
  --platform "$wheel_platform" --python-version "$version" --implementation cp --only-binary=:all: \
  "awslambdaric==$ric_version" "boto3==$boto3_version"
# unchecked-hash: valid whatever mtimes the files get; -p /: the paths the container sees.
"$host_python" -m compileall -q -j 0 --invalidation-mode unchecked-hash -s "$root" -p / \
  -x '/(test|idlelib|lib2to3|tkinter|turtledemo)/' "$root/usr/lib/python$version" "$root/var/runtime" > "$work/compile.log" \
  || { tail -30 "$work/compile.log" >&2; exit 1; }
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
