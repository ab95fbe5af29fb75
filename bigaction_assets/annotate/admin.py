"""Accounts for the annotation app, made by an administrator on the server's machine.

    python -m bigaction_assets.annotate.admin add-user NAME          # asks for the password twice
    printf '%s\n' "$PW" | python -m bigaction_assets.annotate.admin add-user NAME --password-stdin
    python -m bigaction_assets.annotate.admin list-users
    python -m bigaction_assets.annotate.admin disable-user NAME      # also ends their sessions

A password never goes on the command line (where `ps` and shell history would show it).
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from bigaction_assets.annotate import default_store_path
from bigaction_assets.annotate.accounts import Accounts
from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.security import Passwords


def read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("New password: ")
    if first != getpass.getpass("Repeat it: "):
        raise ValueError("the two passwords differ")
    return first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Accounts of the BigAction annotation app.")
    parser.add_argument("--store", type=Path, help="the app's store (default: data/annotate/)")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add-user", help="create an account")
    add.add_argument("username")
    add.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    commands.add_parser("list-users", help="accounts and whether they are active")
    for name in ("disable-user", "enable-user"):
        commands.add_parser(name).add_argument("username")
    args = parser.parse_args(argv)
    accounts = Accounts(Database(args.store or default_store_path()), Passwords())
    try:
        if args.command == "add-user":
            user_id = accounts.add_user(args.username, read_password(args.password_stdin))
            print(f"created {args.username} (annotator {user_id})")
        elif args.command == "list-users":
            for user in accounts.users():
                state = "active" if user["active"] else "disabled"
                print(
                    f"{user['user_id']:>5}  {user['username']:<24} {state:<9} {user['created_at']}"
                )
        else:
            accounts.set_active(args.username, args.command == "enable-user")
            print(f"{args.username}: {args.command.split('-')[0]}d")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
