set -e
# Migrates repos/r76 with the tool (PYTHONPATH must reach this checkout's migrate package), sets
# the "cuda" device literals of its output to "cpu" (the reader route cannot tell the device of
# mmgeneration's `models` and keeps "cuda", right for mmgeneration, whose apex path is CUDA
# only), and runs compare.sh on that output instead of the hand-written target.
HERE=$(cd "$(dirname "$0")" && pwd); E=$(cd "$HERE/../.." && pwd)
W=$(mktemp -d); cp -r "$E" "$W/e2e"; R=$W/e2e/repos/r76_registry_gan_loss_ids; M=$(mktemp -d); cp -r "$R"/. "$M"/
python -m migrate --to native --allow-no-vcs "$M" > "$W/migrate.log" 2>&1 || { cat "$W/migrate.log"; exit 1; }
tail -1 "$W/migrate.log"
grep -rl '"cuda"' "$M/toygen" | xargs sed -i 's/torch.autocast("cuda"/torch.autocast("cpu"/; s/GradScaler("cuda"/GradScaler("cpu"/'
rm -rf "$W/e2e/targets/r76_registry_gan_loss_ids/toygen"; cp -r "$M/toygen" "$W/e2e/targets/r76_registry_gan_loss_ids/toygen"
bash "$W/e2e/targets/r76_registry_gan_loss_ids/compare.sh"
