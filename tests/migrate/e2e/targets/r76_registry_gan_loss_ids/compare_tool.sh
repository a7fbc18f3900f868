set -e
# Migrates repos/r76 with the tool (PYTHONPATH must reach this checkout's migrate package) and
# runs compare.sh on that output instead of the hand-written target (its autocast and GradScalers
# follow the device of the models and optimizers at run time: the CPU here).
HERE=$(cd "$(dirname "$0")" && pwd); E=$(cd "$HERE/../.." && pwd)
W=$(mktemp -d); cp -r "$E" "$W/e2e"; R=$W/e2e/repos/r76_registry_gan_loss_ids; M=$(mktemp -d); cp -r "$R"/. "$M"/
python -m migrate --to native --allow-no-vcs "$M" > "$W/migrate.log" 2>&1 || { cat "$W/migrate.log"; exit 1; }
tail -1 "$W/migrate.log"
rm -rf "$W/e2e/targets/r76_registry_gan_loss_ids/toygen"; cp -r "$M/toygen" "$W/e2e/targets/r76_registry_gan_loss_ids/toygen"
bash "$W/e2e/targets/r76_registry_gan_loss_ids/compare.sh"
