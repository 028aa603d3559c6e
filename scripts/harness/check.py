"""Checks the Python under scripts/ (the harness, the acoustic lab, every other script):
  - no function or method is longer than MAX_FUNCTION_LINES lines;
  - no module imports itself through others (an import cycle);
  - the harness's layers import only downwards: lab, then measure, judge, report, and the
    entry points (bench, soak) on top; scripts/harness/__init__.py below them all.
Prints each breach and exits 1 if there is one. Standard library only, so that Debian's own
/usr/bin/python3 runs it (scripts/test does):

  /usr/bin/python3 scripts/harness/check.py [DIRECTORY]   (default: the scripts/ it is in)"""
import ast
import sys
from pathlib import Path

MAX_FUNCTION_LINES = 120
HARNESS = "harness"
# The harness's layers, lowest first; a module of the package outside them is an entry point.
LAYERS = ("lab", "measure", "judge", "report")


def module_name(path):
    """The name a file is imported by: its path from the first folder up that is not a
    package (no __init__.py), which is where the scripts put it on sys.path."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def long_functions(path, tree):
    """(line, name, length) of each function or method longer than MAX_FUNCTION_LINES,
    counted from its `def` line to its last line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append((node.lineno, node.name, length))
    return found


def with_parents(name):
    """A dotted name and every package above it: importing a.b.c runs a and a.b first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def imported(name, is_package, tree):
    """Every dotted name the module imports, at its top or inside functions (those run too),
    relative imports resolved against its package."""
    package = name if is_package else name.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            names.append(base)
            # `from package import module` imports that module too.
            names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names


def import_graph(modules):
    """For each module of ours, the modules of ours it imports (and so runs)."""
    graph = {}
    for name, (path, tree) in modules.items():
        targets = set()
        for target in imported(name, path.name == "__init__.py", tree):
            targets.update(n for n in with_parents(target) if n in modules and n != name)
        graph[name] = sorted(targets)
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer(name):
    """A harness module's layer: -1 for the package itself, the index in LAYERS for a module
    of a layer, len(LAYERS) for an entry point; None outside the harness."""
    parts = name.split(".")
    if parts[0] != HARNESS:
        return None
    if len(parts) == 1:
        return -1
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else len(LAYERS)


def upward_imports(graph):
    """(importer, imported) pairs where a harness module imports one of a higher layer."""
    return [(name, target) for name, targets in sorted(graph.items()) for target in targets
            if layer(name) is not None and layer(target) is not None and layer(target) > layer(name)]


def main():
    top = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    problems, modules, functions = [], {}, 0
    for path in sorted(top.rglob("*.py")):
        if any(part in ("__pycache__", ".venv") for part in path.parts):
            continue
        tree = ast.parse(path.read_text(), str(path))
        functions += sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree))
        for line, name, length in long_functions(path, tree):
            problems.append(f"{path}:{line}: {name} is {length} lines long (at most {MAX_FUNCTION_LINES})")
        modules[module_name(path)] = (path, tree)
    graph = import_graph(modules)
    for component in cycles(graph):
        problems.append("import cycle: " + ", ".join(component))
    for name, target in upward_imports(graph):
        problems.append(f"{modules[name][0]}: {name} imports {target}, a layer above its own")
    for problem in problems:
        print(f"check: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"check: {len(modules)} modules under {top}, {functions} functions, none over {MAX_FUNCTION_LINES} lines; "
          "no import cycle; the harness's layers import only downwards")


if __name__ == "__main__":
    main()
