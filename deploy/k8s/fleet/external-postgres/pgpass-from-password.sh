#!/bin/sh
# Writes a libpq password file (PGPASSFILE) from a file holding only the
# database password: pgpass-from-password.sh PASSWORD_FILE PGPASS_FILE.
# libpq ignores a password file that its group or others may read, and a
# mounted Kubernetes Secret is group-readable once the pod sets fsGroup, so
# the daemon reads this 0600 copy instead.
set -eu
umask 077
# pgpass fields escape ':' and '\'; every host, port, database and user.
password=$(sed 's/[\\:]/\\&/g' "$1")
printf '*:*:*:*:%s\n' "$password" >"$2"
