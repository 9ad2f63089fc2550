#!/bin/sh
# Backs up a folder into backup-YYYY-MM-DD.tar.gz.
set -eu
src=${1:?usage: backup.sh <folder>}
tar -czf "backup-$(date +%Y-%m-%d).tar.gz" $src
