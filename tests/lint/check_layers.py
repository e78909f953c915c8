#!/usr/bin/env python3
"""Include layering: a file of module M may include a2ad headers only from M itself or from
the modules M depends on (its DEPS, transitively), as declared with a2ad_module() in the
CMakeLists. The link graph catches wrong-way uses of out-of-line symbols, but a header-only
type (a struct, an inline function, a template) included the wrong way compiles and links;
this check does not let it.

  check_layers.py MODULES_TXT SRC_ROOT     (MODULES_TXT: build/<preset>/a2ad_modules.txt)
Exit 1 naming every violation."""
import os
import re
import sys


def main():
    modules_txt, src_root = sys.argv[1], sys.argv[2]
    root = os.path.join(src_root, "src", "a2ad")
    deps, dirs = {}, {}
    for line in open(modules_txt):
        line = line.strip()
        if not line:
            continue
        name, dir_list, dep_list = (line.split(";") + ["", ""])[:3]
        deps[name] = [d for d in dep_list.split(",") if d]
        for d in dir_list.split(","):
            dirs[d] = name

    def closure(name, seen=None):
        seen = set() if seen is None else seen
        for d in deps.get(name, []):
            if d not in seen:
                seen.add(d)
                closure(d, seen)
        return seen

    def module_of(rel_dir):
        # The module owning the longest folder prefix of rel_dir.
        best, best_len = None, -1
        for d, name in dirs.items():
            if (rel_dir == d or rel_dir.startswith(d + "/")) and len(d) > best_len:
                best, best_len = name, len(d)
        return best

    include = re.compile(r'^\s*#\s*include\s+"a2ad/([^"]+)"')
    violations = []
    checked = 0
    for base, _, files in os.walk(root):
        for f in files:
            if not f.endswith((".cpp", ".hpp")):
                continue
            rel_dir = os.path.relpath(base, root)
            owner = module_of(rel_dir)
            if owner is None:
                continue  # executables (cli/) may use anything they link
            allowed = closure(owner) | {owner}
            path = os.path.join(base, f)
            for n, line in enumerate(open(path, encoding="utf-8"), 1):
                m = include.match(line)
                if not m:
                    continue
                checked += 1
                target = module_of(os.path.dirname(m.group(1)))
                if target is None:
                    violations.append(f"{os.path.relpath(path, src_root)}:{n}: includes "
                                      f"a2ad/{m.group(1)}, which belongs to no module")
                elif target not in allowed:
                    violations.append(
                        f"{os.path.relpath(path, src_root)}:{n}: module '{owner}' includes "
                        f"a2ad/{m.group(1)} of module '{target}', which is not among its DEPS "
                        f"({', '.join(sorted(closure(owner))) or 'none'})")
    for v in violations:
        print("layering:", v, file=sys.stderr)
    if checked == 0:
        print("layering: no includes found; wrong paths?", file=sys.stderr)
        return 1
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
