"""The code tasks, as data: what to compute (several phrasings), the reference body, buggy bodies
a hurried programmer writes (off by one, a missed edge case, the wrong operator), how to draw an
input, and edge inputs that expose the bugs. `code_items.py` turns a task into a LiveCodeBench-style
problem, stdin/stdout or call-based.

A body is the inside of `def f(<args>):`, indented by 4 spaces; its arguments are named by `shape`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

Args = tuple[object, ...]


@dataclass(frozen=True)
class Shape:
    """How the arguments arrive: their names, how stdin lays them out, how a question describes that."""

    args: tuple[str, ...]
    annotations: tuple[str, ...]
    read: str  # the stdin program's reading code
    describe: tuple[str, ...]  # phrasings of the input format

    def stdin_text(self, values: Args) -> str:
        if self.args == ("nums",):
            (nums,) = values
            return f"{len(nums)}\n{' '.join(map(str, nums))}\n"  # type: ignore[arg-type]
        if self.args == ("nums", "k"):
            nums, k = values
            return f"{len(nums)} {k}\n{' '.join(map(str, nums))}\n"  # type: ignore[arg-type]
        return "".join(f"{v}\n" for v in values)


SHAPES: dict[str, Shape] = {
    "nums": Shape(("nums",), ("List[int]",), "n = int(input())\nnums = list(map(int, input().split()))[:n]\n", (
        "The first line contains an integer N. The second line contains N space-separated integers.",
        "Input: N on the first line, then N integers on one line.",
        "You are given N, followed by a line of N integers.",
    )),
    "nums_k": Shape(("nums", "k"), ("List[int]", "int"),
                    "n, k = map(int, input().split())\nnums = list(map(int, input().split()))[:n]\n", (
        "The first line holds N and K; the second line holds N integers.",
        "Input: two integers N and K, then a line with N integers.",
        "Read N and K from the first line and the array from the second.",
    )),
    "text": Shape(("s",), ("str",), "s = input().strip()\n", (
        "The input is a single line containing the string S.",
        "Read one line: the string S.",
        "S is given on one line of standard input.",
    )),
    "int": Shape(("n",), ("int",), "n = int(input())\n", (
        "The input is one integer N.",
        "Read a single integer N.",
        "A single line holds N.",
    )),
    "two_ints": Shape(("a", "b"), ("int", "int"), "a = int(input())\nb = int(input())\n", (
        "Two lines of input: the integer A, then the integer B.",
        "Read A and B, one per line.",
        "The first line is A and the second is B.",
    )),
}


@dataclass(frozen=True)
class CodeTask:
    name: str
    subject: str
    shape: str
    returns: str  # "int", "bool", "list" or "str": how the answer is printed and annotated
    func_name: str
    statements: tuple[str, ...]
    ref: str
    wrong: tuple[str, ...]
    draw: Callable[[random.Random], Args]
    edges: tuple[Args, ...] = ()


def _ints(rng: random.Random, lo: int = -50, hi: int = 50, n_lo: int = 1, n_hi: int = 12) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(rng.randint(n_lo, n_hi))]


def _word(rng: random.Random, letters: str = "abcde", lo: int = 1, hi: int = 14) -> str:
    return "".join(rng.choice(letters) for _ in range(rng.randint(lo, hi)))


def _sentence(rng: random.Random) -> str:
    words = ["apple", "river", "stone", "cloud", "tiger", "lamp", "orbit", "pixel", "maple", "ember", "quartz", "zebra"]
    return " ".join(rng.choice(words) for _ in range(rng.randint(1, 7)))


CODE_TASKS: tuple[CodeTask, ...] = (
    CodeTask("count_greater", "arrays", "nums_k", "int", "countGreater", (
        "Count how many elements of the array are strictly greater than K.",
        "Given an integer array and a threshold K, report the number of values that exceed K.",
        "How many of the numbers are larger than K (not equal)? Output that count.",
    ), "    return sum(1 for x in nums if x > k)\n", (
        "    return sum(1 for x in nums if x >= k)\n",
        "    return sum(1 for x in nums[1:] if x > k)\n",
        "    return sum(1 for x in nums if x < k)\n",
    ), lambda r: (_ints(r, -20, 20), r.randint(-10, 10)), (([5, 5, 6], 5), ([7, 1], 0), ([1, 2, 3], 1))),
    CodeTask("max_minus_min", "arrays", "nums", "int", "spread", (
        "Output the difference between the largest and the smallest element.",
        "Find max(A) - min(A) for the given array A.",
        "The spread of a list is its maximum minus its minimum. Compute the spread.",
    ), "    return max(nums) - min(nums)\n", (
        "    return max(nums) - nums[0]\n",
        "    s = sorted(nums)\n    return s[-1] - s[1] if len(s) > 1 else 0\n",
        "    return abs(max(nums)) - abs(min(nums))\n",
    ), lambda r: (_ints(r, -60, 60, 1, 10),), (([3, 1, 9],), ([-5, -2, -9],), ([4],))),
    CodeTask("second_largest", "arrays", "nums", "int", "secondLargest", (
        "Return the second largest distinct value in the array. The array has at least two distinct values.",
        "Among the distinct numbers given, which is the second biggest? Print it. At least two distinct values are present.",
        "Find the runner-up value: the largest value strictly smaller than the maximum (it always exists).",
    ), "    return sorted(set(nums))[-2]\n", (
        "    return sorted(nums)[-2]\n",
        "    return sorted(set(nums))[1]\n",
        "    m = max(nums)\n    return max(x for x in nums if x != m and x > 0)\n",
    ), lambda r: (_distinct2(r),), (([5, 5, 3],), ([1, 2, 3, 4],), ([9, 1, 4],), ([5, -3],))),
    CodeTask("longest_increasing_run", "arrays", "nums", "int", "longestRun", (
        "Find the length of the longest contiguous strictly increasing run in the array.",
        "A run is a block of consecutive elements where each is bigger than the one before. How long is the longest run?",
        "Report the maximum length of a contiguous, strictly increasing subarray.",
    ), "    best = cur = 1\n    for i in range(1, len(nums)):\n        cur = cur + 1 if nums[i] > nums[i - 1] else 1\n"
       "        best = max(best, cur)\n    return best\n", (
        "    best = cur = 1\n    for i in range(1, len(nums)):\n        cur = cur + 1 if nums[i] >= nums[i - 1] else 1\n"
        "        best = max(best, cur)\n    return best\n",
        "    best = cur = 1\n    for i in range(1, len(nums)):\n        if nums[i] > nums[i - 1]:\n            cur += 1\n"
        "        else:\n            best = max(best, cur)\n            cur = 1\n    return best\n",
        "    best = cur = 0\n    for i in range(1, len(nums)):\n        cur = cur + 1 if nums[i] > nums[i - 1] else 0\n"
        "        best = max(best, cur)\n    return best\n",
    ), lambda r: (_ints(r, 0, 9, 1, 12),), (([1, 2, 3],), ([2, 2, 2],), ([5, 1, 2, 3, 0],), ([7],))),
    CodeTask("pairs_with_sum", "arrays", "nums_k", "int", "countPairs", (
        "Count the pairs of indices i < j with nums[i] + nums[j] == K.",
        "How many index pairs (i, j), i < j, have elements adding up to K?",
        "Given the array and a target K, print the number of unordered index pairs whose values sum to K.",
    ), "    n = len(nums)\n    return sum(1 for i in range(n) for j in range(i + 1, n) if nums[i] + nums[j] == k)\n", (
        "    n = len(nums)\n    return sum(1 for i in range(n) for j in range(n) if i != j and nums[i] + nums[j] == k)\n",
        "    n = len(nums)\n    return sum(1 for i in range(n) for j in range(i, n) if nums[i] + nums[j] == k)\n",
        "    return len({(min(a, k - a), max(a, k - a)) for a in nums if k - a in nums})\n",
    ), lambda r: (_ints(r, 0, 8, 2, 10), r.randint(2, 12)), (([1, 2, 3], 4), ([2, 2, 2], 4), ([1, 3], 4))),
    CodeTask("prefix_sums", "arrays", "nums", "list", "prefixSums", (
        "Output the running totals: the i-th output is the sum of the first i+1 elements.",
        "Compute the prefix sums of the array.",
        "For every position, print the sum of all elements up to and including it.",
    ), "    out, total = [], 0\n    for x in nums:\n        total += x\n        out.append(total)\n    return out\n", (
        "    out, total = [], 0\n    for x in nums:\n        out.append(total)\n        total += x\n    return out\n",
        "    return [sum(nums[:i + 1]) for i in range(len(nums) - 1)]\n",
        "    out, total = [], 0\n    for x in nums:\n        total = x\n        out.append(total)\n    return out\n",
    ), lambda r: (_ints(r, -9, 9, 1, 10),), (([1, 2, 3],), ([5],), ([-1, 1],))),
    CodeTask("rotate_right", "arrays", "nums_k", "list", "rotateRight", (
        "Rotate the array to the right by K steps and output it.",
        "Shift every element K places to the right, wrapping around the end, and print the result.",
        "Return the array after a cyclic right rotation by K positions (K may exceed the length).",
    ), "    n = len(nums)\n    k %= n\n    return nums[n - k:] + nums[:n - k]\n", (
        "    return nums[len(nums) - k:] + nums[:len(nums) - k]\n",
        "    n = len(nums)\n    k %= n\n    return nums[k:] + nums[:k]\n",
        "    n = len(nums)\n    k %= n\n    return nums[n - k - 1:] + nums[:n - k - 1]\n",
    ), lambda r: (_ints(r, 0, 9, 2, 8), r.randint(0, 20)), (([1, 2, 3], 4), ([1, 2, 3, 4], 1), ([5, 6], 0))),
    CodeTask("count_distinct", "arrays", "nums", "int", "countDistinct", (
        "How many different values does the array contain?",
        "Output the number of distinct integers in the list.",
        "Count the unique values among the given numbers.",
    ), "    return len(set(nums))\n", (
        "    return sum(1 for i in range(1, len(nums)) if nums[i] != nums[i - 1]) + 1\n",
        "    return len(nums) - 1 if len(set(nums)) < len(nums) else len(nums)\n",
        "    return len(set(abs(x) for x in nums))\n",
    ), lambda r: (_ints(r, -5, 5, 1, 12),), (([1, 2, 1],), ([3, 3, 3, 3],), ([-2, 2, 5],))),
    CodeTask("count_vowels", "strings", "text", "int", "countVowels", (
        "Count the vowels (a, e, i, o, u) in the lowercase string S.",
        "How many characters of S are vowels? S has only lowercase letters.",
        "Report the number of letters of S that are one of a, e, i, o, u.",
    ), "    return sum(1 for c in s if c in 'aeiou')\n", (
        "    return sum(1 for c in s if c in 'aeiouy')\n",
        "    return sum(1 for c in s[1:] if c in 'aeiou')\n",
        "    return sum(1 for c in set(s) if c in 'aeiou')\n",
    ), lambda r: (_word(r, "abeiouyxz", 1, 15),), (("apple",), ("yay",), ("aa",))),
    CodeTask("is_palindrome", "strings", "text", "bool", "isPalindrome", (
        "Decide whether S reads the same forwards and backwards.",
        "Is the string S a palindrome?",
        "Check if reversing S gives S back.",
    ), "    return s == s[::-1]\n", (
        "    return s[1:] == s[1:][::-1]\n",
        "    return s[: len(s) // 2] == s[len(s) // 2:][::-1] and len(s) % 2 == 0\n",
        "    return s[0] == s[-1]\n",
    ), lambda r: (_maybe_palindrome(r),), (("aba",), ("abca",), ("ab",), ("baab",))),
    CodeTask("run_length", "strings", "text", "str", "compress", (
        "Compress S by replacing each run of a repeated letter with the letter followed by the run length (aaab -> a3b1).",
        "Write the run-length encoding of S: each maximal block of equal characters becomes the character and its count.",
        "Encode S so that 'xxyzzz' becomes 'x2y1z3'.",
    ), "    out, i = [], 0\n    while i < len(s):\n        j = i\n        while j < len(s) and s[j] == s[i]:\n            j += 1\n"
       "        out.append(s[i] + str(j - i))\n        i = j\n    return ''.join(out)\n", (
        "    return ''.join(c + str(s.count(c)) for c in dict.fromkeys(s))\n",
        "    out, i = [], 0\n    while i < len(s):\n        j = i\n        while j < len(s) and s[j] == s[i]:\n            j += 1\n"
        "        out.append(s[i] + (str(j - i) if j - i > 1 else ''))\n        i = j\n    return ''.join(out)\n",
        "    out, cur, n = [], s[0], 0\n    for c in s:\n        if c == cur:\n            n += 1\n        else:\n"
        "            out.append(cur + str(n))\n            cur, n = c, 1\n    return ''.join(out)\n",
    ), lambda r: (_word(r, "abc", 1, 12),), (("aab",), ("abab",), ("aaa",))),
    CodeTask("most_frequent_char", "strings", "text", "str", "mostFrequent", (
        "Output the character that occurs most often in S; on a tie, the alphabetically smallest one.",
        "Which letter appears the most times in S? Break ties by choosing the earliest letter in the alphabet.",
        "Find the most common character of S (ties go to the smaller character).",
    ), "    return min(set(s), key=lambda c: (-s.count(c), c))\n", (
        "    return max(set(s), key=lambda c: (s.count(c), c))\n",
        "    return max(s, key=s.count)\n",
        "    return sorted(s)[len(s) // 2]\n",
    ), lambda r: (_word(r, "abcdz", 1, 14),), (("bbaa",), ("zzab",), ("cab",))),
    CodeTask("reverse_words", "strings", "text", "str", "reverseWords", (
        "Reverse the order of the words in S. Words are separated by single spaces.",
        "Print the words of the sentence S in reverse order.",
        "Given a line of space-separated words, output them last-to-first.",
    ), "    return ' '.join(s.split()[::-1])\n", (
        "    return s[::-1]\n",
        "    w = s.split()\n    return ' '.join(w[-1:] + w[1:-1] + w[:1]) if len(w) > 1 else s\n",
        "    return ' '.join(sorted(s.split(), reverse=True))\n",
    ), lambda r: (_sentence(r),), (("apple river stone",), ("lamp orbit pixel maple",), ("zebra apple",))),
    CodeTask("digit_sum", "math", "int", "int", "digitSum", (
        "Compute the sum of the decimal digits of N (N >= 0).",
        "Add up the digits of the non-negative integer N.",
        "What is the digit sum of N? N is non-negative.",
    ), "    return sum(int(c) for c in str(n))\n", (
        "    return n % 9\n",
        "    t = 0\n    while n > 9:\n        t += n % 10\n        n //= 10\n    return t\n",
        "    return sum(int(c) for c in str(n)[1:])\n",
    ), lambda r: (r.randint(0, 10 ** r.randint(1, 9)),), ((9,), (7,), (18,), (1000,))),
    CodeTask("count_primes", "math", "int", "int", "countPrimes", (
        "Count the prime numbers less than or equal to N.",
        "How many primes p satisfy 2 <= p <= N?",
        "Output the number of primes not exceeding N.",
    ), "    return sum(1 for p in range(2, n + 1) if all(p % d for d in range(2, int(p ** 0.5) + 1)))\n", (
        "    return sum(1 for p in range(2, n) if all(p % d for d in range(2, int(p ** 0.5) + 1)))\n",
        "    return sum(1 for p in range(1, n + 1) if all(p % d for d in range(2, int(p ** 0.5) + 1)))\n",
        "    return sum(1 for p in range(2, n + 1) if all(p % d for d in range(2, int(p ** 0.5))))\n",
    ), lambda r: (r.randint(0, 300),), ((7,), (1,), (25,), (10,))),
    CodeTask("fibonacci", "math", "int", "int", "fib", (
        "Return the N-th Fibonacci number, with F(0) = 0 and F(1) = 1.",
        "The Fibonacci sequence starts 0, 1, 1, 2, 3, 5, ... (F(0) = 0). Output F(N).",
        "Compute F(N) where F(0)=0, F(1)=1 and F(n)=F(n-1)+F(n-2).",
    ), "    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n", (
        "    a, b = 1, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
        "    a, b = 0, 1\n    for _ in range(n - 1):\n        a, b = b, a + b\n    return a\n",
        "    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return b\n",
    ), lambda r: (r.randint(0, 60),), ((0,), (1,), (2,), (10,))),
    CodeTask("trailing_zeros", "math", "int", "int", "trailingZeros", (
        "How many trailing zeros does N! have?",
        "Count the zeros at the end of the decimal representation of N factorial.",
        "Output the number of trailing zeroes of N!.",
    ), "    c = 0\n    while n:\n        n //= 5\n        c += n\n    return c\n", (
        "    return n // 5\n",
        "    return n // 10\n",
        "    c, p = 0, 5\n    while p < n:\n        c += n // p\n        p *= 5\n    return c\n",
    ), lambda r: (r.randint(0, 2000),), ((25,), (10,), (125,), (5,))),
    CodeTask("gcd_pair", "math", "two_ints", "int", "gcd", (
        "Compute the greatest common divisor of A and B (both positive).",
        "Output gcd(A, B) for two positive integers.",
        "Find the largest integer dividing both A and B.",
    ), "    while b:\n        a, b = b, a % b\n    return a\n", (
        "    return min(a, b)\n",
        "    return max(d for d in range(1, min(a, b)) if a % d == 0 and b % d == 0) if min(a, b) > 1 else 1\n",
        "    return a % b if a % b else b\n",
    ), lambda r: (r.randint(1, 500), r.randint(1, 500)), ((12, 18), (7, 7), (6, 12), (9, 28))),
    CodeTask("count_multiples", "math", "two_ints", "int", "countMultiples", (
        "Count the integers x with 1 <= x <= A that are divisible by B.",
        "How many multiples of B are there from 1 to A inclusive?",
        "Output the number of positive multiples of B that do not exceed A.",
    ), "    return a // b\n", (
        "    return a // b + 1\n",
        "    return (a - 1) // b\n",
        "    return round(a / b)\n",
    ), lambda r: (r.randint(1, 1000), r.randint(1, 30)), ((10, 5), (9, 5), (4, 7))),
    CodeTask("is_power_of_two", "math", "int", "bool", "isPowerOfTwo", (
        "Decide whether N is a power of two (1, 2, 4, 8, ...). N >= 1.",
        "Is the positive integer N equal to 2^k for some k >= 0?",
        "Check if N has exactly one bit set in binary.",
    ), "    return n & (n - 1) == 0\n", (
        "    return n % 2 == 0\n",
        "    return n & (n - 1) == 0 and n > 1\n",
        "    return bin(n).count('1') <= 2\n",
    ), lambda r: (r.choice([2 ** r.randint(0, 20), r.randint(1, 5000)]),), ((1,), (6,), (8,), (3,))),
)


def _distinct2(rng: random.Random) -> list[int]:
    xs = _ints(rng, -30, 30, 2, 10)
    while len(set(xs)) < 2:
        xs.append(rng.randint(-30, 30))
    return xs


def _maybe_palindrome(rng: random.Random) -> str:
    half = _word(rng, "abc", 1, 6)
    if rng.random() < 0.5:
        return half + rng.choice(["", "a", "b"]) + half[::-1]
    return _word(rng, "abc", 1, 10)


TASKS_BY_NAME: dict[str, CodeTask] = {t.name: t for t in CODE_TASKS}
