"""Grade a learner's own solutions to the lesson: their softmax, their forward and the three exercises.

- `skeleton`: the file a learner fills in (`sdpa-lab new-solutions FILE`);
- `runner`: the learner's code in its own process, with a time and a memory limit;
- `checks`: what each function and exercise must satisfy, tied to the claims;
- `mistakes`: the classic mistakes as runnable variants, and the diagnosis that names them;
- `grade`: all of it for one file, and the terminal report (`sdpa-lab grade FILE`);
- `cli`: the two subcommands.
"""
