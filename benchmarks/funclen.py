"""C function lengths by brace matching (comments and strings stripped):
the functions over 100 lines, then the counts over 100 and 150.

    python3 benchmarks/funclen.py            # csrc/*.c
"""
import re, sys, glob, os
def funcs(path):
    src = open(path).read()
    # strip comments and strings
    s = re.sub(r'/\*.*?\*/', lambda m: '\n'*m.group(0).count('\n'), src, flags=re.S)
    s = re.sub(r'//[^\n]*', '', s)
    s = re.sub(r'"(\\.|[^"\\])*"', '""', s)
    s = re.sub(r"'(\\.|[^'\\])*'", "''", s)
    out = []
    depth = 0; i = 0; start = None; name = None
    lines = s.split('\n')
    txt = s
    for m in re.finditer(r'[{}]', txt):
        if m.group(0) == '{':
            if depth == 0:
                head = txt[max(0, m.start()-400):m.start()]
                mm = re.search(r'(\w+)\s*\([^;{}]*\)\s*$', head, re.S)
                if mm and mm.group(1) not in ('if','for','while','switch'):
                    name = mm.group(1); start = txt.count('\n', 0, m.start())+1
                else:
                    name = None
            depth += 1
        else:
            depth -= 1
            if depth == 0 and name:
                end = txt.count('\n', 0, m.start())+1
                out.append((end-start+1, name, path))
                name = None
    return out
files = sys.argv[1:] or sorted(glob.glob('csrc/*.c'))
allf = []
for f in files: allf += funcs(f)
allf.sort(reverse=True)
for n, name, p in allf:
    if n > 100: print(n, name, p)
print('over100', sum(1 for x in allf if x[0]>100), 'over150', sum(1 for x in allf if x[0]>150))
