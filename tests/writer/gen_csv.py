#!/usr/bin/env python3
import random, sys
# gen_csv.py OUT ROWS SEED: a CSV with every type `pqtool write` infers and the
# awkward cases (quotes, line breaks in fields, NULL vs "", nan/inf, -0.0,
# dates before 1970 and past 2262, timestamps local/UTC/nanoseconds).
out, rows, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
words = ['alpha', 'beta', 'a,b', 'say "hi"', 'two\nlines', 'crlf\r\nin', ' lead', 'trail ', 'ünï', '', 'x' * 70]
def q(s):
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n\r') or s == '' else s
with open(out, 'w', newline='') as f:
    f.write('id,k,name,price,ok,day,ts,tsz,tsn,empty\n')
    for i in range(rows):
        def null(p, v):
            return '' if r.random() < p else v
        k = null(0.05, str(r.randrange(-50, 50)))
        name = '' if r.random() < 0.05 else q(r.choice(words))
        price = null(0.05, r.choice([repr(r.uniform(-1e6, 1e6)), str(r.randrange(-9, 9)), 'nan', 'inf', '-inf', '-0.0', '1e-300']))
        ok = null(0.1, r.choice(['true', 'false']))
        y = r.choice([1969, 1970, 2024, 1600, 2400])
        day = null(0.1, '%04d-%02d-%02d' % (y, r.randrange(1, 13), r.randrange(1, 29)))
        ts = null(0.1, '%04d-%02d-%02d %02d:%02d:%02d%s' % (y, r.randrange(1, 13), r.randrange(1, 29), r.randrange(24), r.randrange(60), r.randrange(60), r.choice(['', '.5', '.123456'])))
        tsz = null(0.1, '2024-%02d-%02d %02d:00:00%s+00' % (r.randrange(1, 13), r.randrange(1, 29), r.randrange(24), r.choice(['', '.25'])))
        tsn = null(0.1, '2001-02-03 04:05:06.%09d' % r.randrange(10**9))
        f.write(','.join([str(i), k, name, price, ok, day, ts, tsz, tsn, '']) + '\n')
