"""Speed comparisons against the reference implementations (``make bench``).

Benchmarks print times and ratios in one run; they never assert a time.
"""
