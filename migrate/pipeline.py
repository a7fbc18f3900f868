"""Run the engine over the files that passed the prefilter, in this process or in a pool
of worker processes; results come back in the order the files were given."""

from __future__ import annotations

import gc
import os
from contextlib import ExitStack
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .collector import fewer_collections, paused_collector, worker_started
from .settings import Settings

if TYPE_CHECKING:  # the engine imports LibCST: load it only when a file needs parsing
    from .early_pool import EarlyPool, Workers
    from .results import MigrationResult
    from .findings import Finding
    from .repo_plan import FilePlan, RepoPlan

#: codes by which a native run says a file stayed on apex.amp semantics (apexcompat.amp)
SHIM_FALLBACK_CODES = frozenset({"APX220", "APX102"})
#: codes that make a planned component fall back too: a forward pass left out of autocast
#: would train in float32 while the GradScaler scales (migrated, but not as apex trained);
#: and a clip on every micro-step (``_clips_scaled_gradients``)
COMPONENT_FALLBACK_CODES = SHIM_FALLBACK_CODES | {"APX210"}

#: (path as shown, source bytes), optionally with the file's part of the cross-file plan
Job = Union[Tuple[str, bytes], Tuple[str, bytes, Optional["FilePlan"]]]
#: below this many files a pool costs more to start than it saves
MIN_FILES_PER_WORKER = 4
def _migrate(job: Job, settings: Settings) -> "MigrationResult":
    from .engine import migrate_source

    path, source = job[0], job[1]
    plan = job[2] if len(job) > 2 else None  # type: ignore[misc]
    return migrate_source(source, path, settings, plan=plan)


_worker_settings: Optional[Settings] = None


def _init_worker(settings: Settings) -> None:
    global _worker_settings
    from . import engine  # noqa: F401  (LibCST and the rules, loaded by each worker as it starts)

    _worker_settings = settings
    worker_started()  # a spawned worker's own collector settings


def _migrate_in_worker(job: Job) -> "MigrationResult":
    assert _worker_settings is not None
    return _migrate(job, _worker_settings)


def pool_size(jobs: Sequence[Job], workers: int) -> int:
    """How many worker processes ``jobs`` pay for (1: none, migrate in this process)."""
    return min(workers, max(1, len(jobs) // MIN_FILES_PER_WORKER))


def migrate_all(
    jobs: Sequence[Job],
    settings: Settings,
    workers: int,
    pool: Optional["EarlyPool"] = None,
) -> Iterator["MigrationResult"]:
    """Yield one result per job, in order; ``workers`` > 1 uses a process pool when there
    are enough files to pay for it (the biggest files are started first, their results
    held back until those of the files before them are in); a run's ``pool``, started
    already, is used whatever the number of files."""
    if pool is not None:
        yield from pool.migrate(jobs) if jobs else ()
        return
    workers = pool_size(jobs, workers)
    if workers <= 1:
        for job in jobs:
            yield _migrate(job, settings)
        return
    from .early_pool import biggest_first, fork_context

    context = fork_context()
    # the biggest files first, so that no worker is left with a long one at the end
    order = biggest_first(jobs)
    finished: Dict[int, "MigrationResult"] = {}
    next_index = 0
    with context.Pool(workers, initializer=_init_worker, initargs=(settings,)) as processes:
        results = processes.imap(_migrate_in_worker, [jobs[i] for i in order], chunksize=1)
        for index, result in zip(order, results):
            finished[index] = result
            while next_index in finished:
                yield finished.pop(next_index)
                next_index += 1


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: how a file of a dropped component is told why (its findings start so on later runs too)
DROPPED = "the GradScaler plan across files was dropped: "


def _fallback_reason(result: "MigrationResult") -> Optional[str]:
    """Why a file of a planned component cannot come out native as planned (it kept apex.amp
    through the shim, its forward pass could not be put under autocast, or it was left
    unchanged by a parse or internal error), as ``in path, message``; None when it can.  A
    finding that only repeats an earlier run's dropped plan is not a reason of its own."""
    failures = [f for f in (result.parse_error, result.internal_error) if f is not None]
    failures += [
        f
        for f in result.findings
        if (f.code in COMPONENT_FALLBACK_CODES or _clips_scaled_gradients(f)) and not f.fixed
    ]
    for failure in failures:
        if DROPPED not in failure.message:
            # no line number: the TODOs this run writes move the lines, and a second run
            # must write the same text again
            return f"in {failure.path}, {failure.message.split('; this file keeps')[0]}"
    if failures:  # only repeats of an earlier run's dropped plan: the reason they carry
        message = failures[0].message
        reason = message.split(DROPPED)[-1].split("; this file keeps")[0]
        # the brackets the note was put in: a site's own words around the plan's note
        # (``... (<DROPPED><reason>)``), and the earlier note a dropped module-scaler route
        # keeps around it (``... (<note>; nor can ... stand in (<DROPPED><reason>))``)
        while reason.endswith(")") and reason.count(")") > reason.count("("):
            reason = reason[:-1]
        return reason
    return None


#: why a file whose forward pass stays outside autocast keeps apex.amp
FLOAT32_REFUSAL = "as written, a native rewrite would train in float32: "
#: why a file that clips the gradients after every backward, stepping only at the
#: accumulation boundary, keeps apex.amp (apex had unscaled them; a GradScaler unscales once
#: per step, so the clip would act on the gradients times the loss scale)
MICRO_STEP_REFUSAL = "as written, a native rewrite would clip scaled gradients on every micro-step: "
#: the same for a call that may change the gradients (``BNOptimizer.updateBN(...)`` adding a
#: sparsity term: it would add it to gradients the step then divides by the loss scale)
MICRO_STEP_CHANGE_REFUSAL = "as written, a native rewrite would change scaled gradients on every micro-step: "
#: why a file that clips gradients a GradScaler still holds scaled where apex had unscaled
#: them (the step or the backward the unscale_ would go between is not proven) keeps apex.amp
SCALED_CLIP_REFUSAL = "as written, a native rewrite would clip scaled gradients: "
#: the unfixed TODOs after which a file of no component keeps apex.amp, and how its reason starts
REFUSED_TODOS = {"APX210": FLOAT32_REFUSAL, "APX326": MICRO_STEP_REFUSAL, "APX327": SCALED_CLIP_REFUSAL}


def _function_at(source: bytes, line: int) -> str:
    """`` in name()``: the innermost function of ``source`` around ``line``, as a refusal names
    where its scale_loss is; "" at module level or where the source does not parse."""
    import ast

    from . import stdlib_trees

    tree = stdlib_trees.parse(source)  # the index's tree of the same text, where it is kept
    if tree is None:
        return ""
    inner: Optional[Tuple[int, str]] = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            inner = max(inner or (node.lineno, node.name), (node.lineno, node.name))
    return f" in {inner[1]}()" if inner else ""


def _clips_scaled_gradients(finding: "Finding") -> bool:
    """An APX326 or APX327 TODO whose call is named as a clip (``gradClipper.step(...)``,
    ``self._clip()``, ``torch.nn.utils.clip_grad_norm_(...)``): it changes the gradients the
    step uses, so as written the native file trains differently.  A call named otherwise (a
    norm read for the log) keeps its TODO in the native file."""
    if finding.code == "APX326":
        used = finding.message.split("per-micro-step gradient use: ")[-1].split(" runs after every backward")[0]
    elif finding.code == "APX327":
        used = finding.message.split("gradients used after the scaled backward: ")[-1].split(" saw gradients")[0]
    else:
        return False
    from .rules._opaque_calls import CHANGES_GRADIENTS

    return "clip" in used.lower() or CHANGES_GRADIENTS in used


def _reviewed(finding: "Finding", source: bytes) -> bool:
    """Whether a suppression comment on the finding's line silences it (the user has read
    the TODO and takes the rewrite as it is)."""
    from .suppress import suppressions_in

    return any(s.line == finding.line and s.silences(finding.code) for s in suppressions_in(source))


def _keep_apex_where_float32(
    jobs: Sequence[Job],
    results: List["MigrationResult"],
    settings: Settings,
    workers: int,
    pool: Optional["EarlyPool"] = None,
) -> List["MigrationResult"]:
    """A file of no component whose forward pass could not be put under autocast would train
    in float32 as written (the TODO says so, but the script runs), one that clips the
    gradients on every micro-step would clip scaled ones: it keeps apex.amp through the shim
    instead, with the reason, as a component would."""
    again: Dict[int, Job] = {}
    for i, (job, result) in enumerate(zip(jobs, results)):
        own_plan = job[2] if len(job) > 2 else None  # type: ignore[misc]
        if own_plan is not None and own_plan.component is not None:
            continue
        todo = next(
            (
                f
                for f in result.findings
                if (f.code == "APX210" or _clips_scaled_gradients(f)) and not f.fixed and not _reviewed(f, job[1])
            ),
            None,
        )
        if todo is not None:
            from .repo_plan import FilePlan

            notes = own_plan.notes if own_plan is not None else ()
            flags = own_plan.parser_factories if own_plan is not None else ()
            from .rules._opaque_calls import CHANGES_GRADIENTS

            prefix = REFUSED_TODOS[todo.code]
            if todo.code == "APX326" and CHANGES_GRADIENTS in todo.message and "clip" not in todo.message.lower():
                prefix = MICRO_STEP_CHANGE_REFUSAL
            # a second run may read the first run's TODO back as the finding's message
            message = todo.message.split(prefix)[-1].split("; this file keeps")[0]
            # the reason stands at the initialize: it names the function of the scale_loss (a
            # line number would move with the TODO the first run writes above it)
            where = _function_at(job[1], todo.line)
            reason = prefix + message.replace("this amp.scale_loss", f"its amp.scale_loss{where}")
            again[i] = (job[0], job[1], FilePlan(notes=notes, refusal=reason, parser_factories=flags))
    for i, result in zip(again, migrate_all(list(again.values()), settings, workers, pool)):
        results[i] = result
    return _keep_needed_probes([again.get(i, job) for i, job in enumerate(jobs)], results, settings, workers, pool)


def _keep_needed_probes(
    jobs: Sequence[Job],
    results: List["MigrationResult"],
    settings: Settings,
    workers: int,
    pool: Optional["EarlyPool"] = None,
) -> List["MigrationResult"]:
    """Each file whose apex availability probe the run folded is migrated once more with it
    kept, where another file still needs apex (``kept_probes``)."""
    from .kept_probes import FOLDED, reruns

    folded = [[f.line for f in r.findings if f.code == FOLDED] for r in results]
    if not any(folded):
        return results
    keep = reruns([(r.path, job[1], r.new, lines) for job, r, lines in zip(jobs, results, folded)])
    if not keep:
        return results
    from .repo_plan import FilePlan

    again: Dict[int, Job] = {}
    for i, (probes, where) in keep.items():
        own_plan = jobs[i][2] if len(jobs[i]) > 2 else None  # type: ignore[misc]
        again[i] = (jobs[i][0], jobs[i][1], replace(own_plan or FilePlan(), kept_probes=probes, apex_needed_at=where))
    for i, result in zip(again, migrate_all(list(again.values()), settings, workers, pool)):
        results[i] = result
    return results


def _override_base_gap(fp: "FilePlan", result: "MigrationResult") -> Optional[str]:
    """Why a launcher of the override-step route cannot have its overrides edited: its
    rewrite does not step each overridden method's optimizer through the GradScaler the
    edit names, with an update right after (never expected); None when it does."""
    from .override_step_route import base_step_gap

    for cls, method, attr in fp.override_steps:
        gap = base_step_gap(result.new.decode("utf-8", "replace"), cls, method, attr, fp.scaler_name)
        if gap is not None:
            return f"in {result.path}, {gap}, which the edit of its override would mirror"
    return None


def migrate_planned(
    jobs: Sequence[Tuple[str, bytes]],
    keys: Sequence[str],
    settings: Settings,
    workers: int,
    plan: Optional["RepoPlan"],
    pool: Optional["EarlyPool"] = None,
) -> List["MigrationResult"]:
    """Migrate ``jobs`` with ``plan`` (its files keyed by ``keys``, one per job); a component
    in which any file falls back is migrated again without the plan, so one amp instance
    comes out native in every file or in none; a file of no component falls back where its
    forward pass could not be put under autocast.  A ``pool`` started before the plan has
    migrated some files already (``early_pool``)."""
    if plan is None or not plan.files:
        first = pool.with_plan([None] * len(jobs)) if pool is not None else list(migrate_all(jobs, settings, workers))
        return _keep_apex_where_float32(jobs, first, settings, workers, pool)
    file_plans = [plan.files.get(key) for key in keys]
    planned: List[Job] = [(path, source, fp) for (path, source), fp in zip(jobs, file_plans)]
    results = pool.with_plan(file_plans) if pool is not None else list(migrate_all(planned, settings, workers))
    failed: Dict[int, str] = {}
    for fp, result in zip(file_plans, results):
        if fp is not None and fp.component is not None and fp.component not in failed:
            reason = _fallback_reason(result) or _override_base_gap(fp, result)
            if reason is not None:
                failed[fp.component] = reason
    if not failed:
        return _keep_apex_where_float32(planned, results, settings, workers, pool)
    for component in failed:
        plan.without(component)
    # each file of a dropped component is migrated again on its own, told why
    again: Dict[int, Job] = {
        i: (jobs[i][0], jobs[i][1], fp.dropped(DROPPED + failed[fp.component]))
        for i, fp in enumerate(file_plans)
        if fp is not None and fp.component in failed
    }
    for i, result in zip(again, migrate_all(list(again.values()), settings, workers, pool)):
        results[i] = result
    return _keep_apex_where_float32(
        [again.get(i, job) for i, job in enumerate(planned)], results, settings, workers, pool
    )


def migrate_repository(
    jobs: Sequence[Tuple[str, bytes]],
    keys: Sequence[str],
    settings: Settings,
    workers: int,
    roots: Sequence[str],
    others: Sequence[Tuple[str, str, bytes]] = (),
    processes: Optional["Workers"] = None,
) -> List["MigrationResult"]:
    """Index the admitted files (``jobs``, their real paths in ``keys``), plan across them
    (a native run; ``others`` are the walked files the prefilter left out, searched for
    callers) and migrate each file once.  One result per job, then one per file of
    ``others`` the plan edits (a file without apex.amp that calls a model factory,
    ``factory_callers``), in the order of ``others``.  ``processes``: the run's worker
    processes, started while the files were read (``early_pool.start_workers``), taken
    over (terminated at the end)."""
    from . import stdlib_trees
    from .early_pool import EarlyPool

    try:
        with fewer_collections(), ExitStack() as stack:
            # the workers start on the files before the plan is built (``early_pool``)
            size = pool_size(jobs, workers)
            if processes is not None and size < 2:
                processes.terminate()  # never expected: started for as many files as a pool pays for
                processes = None
            pool = stack.enter_context(EarlyPool(jobs, settings, size, processes)) if size > 1 else None
            with paused_collector():
                plan = _plan(jobs, keys, settings, roots, others)
                gc.freeze()
            jobs, keys, others = _admitted_by_plan(plan, jobs, keys, others, pool)
            results = migrate_planned(jobs, keys, settings, workers, plan, pool)
        if plan is None:
            return results
        results = _edit_holders(plan, jobs, keys, results, others)
        results = _edit_holders(plan, jobs, keys, results, others, step_heirs=True)
        results = _edit_holders(plan, jobs, keys, results, others, bound=True)
        results = _edit_holders(plan, jobs, keys, results, others, runner_step=True)
        results = _edit_holders(plan, jobs, keys, results, others, override_steps=True)
        results = _edit_reexports(plan, keys, results, others)
        results = _edit_steppable_wrappers(plan, jobs, keys, results, others)
        if not plan.caller_edits:
            return results
        return _edit_factory_callers(plan, jobs, keys, results, others, settings)
    finally:
        stdlib_trees.end_of_run()


def _admitted_by_plan(
    plan: Optional["RepoPlan"],
    jobs: Sequence[Tuple[str, bytes]],
    keys: Sequence[str],
    others: Sequence[Tuple[str, str, bytes]],
    pool: Optional["EarlyPool"],
) -> Tuple[List[Tuple[str, bytes]], List[str], List[Tuple[str, str, bytes]]]:
    """``jobs``, ``keys`` and ``others`` with the files the prefilter left out but the plan
    has the rules migrate moved from ``others`` to the end of the jobs: a function given
    apex.amp by a launcher, whose parameter the rules read as apex.amp there
    (``amp_value_plan``); the ``pool`` started early takes them too."""
    wanted = {p for p, f in plan.files.items() if f.amp_value_parameters} if plan is not None else set()
    promoted = [(path, shown, source) for path, shown, source in others if path in wanted]
    if not promoted:
        return list(jobs), list(keys), list(others)
    added = [(shown, source) for _path, shown, source in promoted]
    if pool is not None:
        pool.add_jobs(added)
    kept = [o for o in others if o[0] not in wanted]
    return list(jobs) + added, list(keys) + [path for path, _shown, _source in promoted], kept


def _plan(
    jobs: Sequence[Tuple[str, bytes]],
    keys: Sequence[str],
    settings: Settings,
    roots: Sequence[str],
    others: Sequence[Tuple[str, str, bytes]],
) -> Optional["RepoPlan"]:
    """The cross-file plan of a native run (None for another target)."""
    if settings.target != "native":
        return None
    from .repo_index import summarise
    from .repo_plan import build_plan
    from .walk import imports_apex, repository_names

    # the plan names files relative to their repository, not to the folder the tool runs in
    names = repository_names([(key, shown) for (shown, _), key in zip(jobs, keys)] + [o[:2] for o in others], roots)
    others = [(path, names[path], source) for path, _shown, source in others]
    summaries = [summarise(key, names[key], source) for (_shown, source), key in zip(jobs, keys)]
    # admitted, but no apex.amp in them: no rule changes them (a docstring naming apex)
    apex_free = {
        key: source
        for (_shown, source), key, summary in zip(jobs, keys, summaries)
        if summary is not None and not summary.amp_sites and not imports_apex(source)
    }
    return build_plan(
        [s for s in summaries if s is not None], roots, others, apex_free, glued=settings.dtype == "float16",
        edit_holders=settings.dtype == "float16", sources={key: source for (_shown, source), key in zip(jobs, keys)},
    )


def _edit_holders(
    plan: "RepoPlan",
    jobs: Sequence[Tuple[str, bytes]],
    keys: Sequence[str],
    results: List["MigrationResult"],
    others: Sequence[Tuple[str, str, bytes]],
    step_heirs: bool = False,
    bound: bool = False,
    runner_step: bool = False,
    override_steps: bool = False,
) -> List["MigrationResult"]:
    """The holder route's edits (``holder_route``; with ``step_heirs`` the step-heir
    route's, ``step_heir_route``; with ``bound`` the bound-backward route's, ``bound_route``;
    with ``runner_step`` the runner-hook route's, ``runner_step_route``; with ``override_steps``
    the override-step route's, ``override_step_route``) of the files without
    apex.amp whose launcher came out native (its component kept); one result per such file of ``others`` is appended.  The
    plan edits no holder file another route edits, and no rule changes a file without
    apex.amp."""
    from .results import MigrationResult
    from .findings import Finding
    from .holder_route import apply_holder_edit, holder_message
    from .bound_route import bound_message
    from .runner_step_route import runner_step_message
    from .step_heir_route import step_heir_message
    from .override_step_route import OVERRIDE_STEP_CODE, override_step_message

    kept = {f.component for f in plan.files.values() if f.component is not None}
    planned = plan.bound_edits if bound else plan.step_heir_edits if step_heirs else plan.holder_edits
    message = bound_message if bound else step_heir_message if step_heirs else holder_message
    code = "APX260" if bound else "APX237"
    if runner_step:
        planned, message, code = plan.runner_step_edits, runner_step_message, "APX254"
    if override_steps:
        planned, message, code = plan.override_step_edits, override_step_message, OVERRIDE_STEP_CODE
    live = {path: (edit, launcher) for path, (component, edit, launcher) in planned.items()
            if component in kept}
    if not live:
        return results

    def edited(path: str, shown: str, source: bytes) -> "MigrationResult":
        edit, launcher = live.pop(path)
        line = min(first for first, _last, _new in edit.lines)
        finding = Finding(shown, line, 1, code, message(edit, launcher), fixed=True, severity="info")
        return MigrationResult(shown, source, apply_holder_edit(source, edit), [finding])

    for i, ((shown, source), path) in enumerate(zip(jobs, keys)):
        if path not in live:
            continue
        if not results[i].changed and results[i].parse_error is None:
            results[i] = edited(path, shown, source)
            continue
        edit, launcher = live.pop(path)  # never expected: no rule changes such a file
        results[i].findings.append(Finding(
            shown, 1, 1, code, f"{message(edit, launcher)}: make that edit by hand (the file was also "
            "rewritten, so the tool did not); until then the losses are not scaled",
        ))
    extra = [edited(path, shown, source) for path, shown, source in others if path in live]
    return results + extra


def _edit_reexports(
    plan: "RepoPlan", keys: Sequence[str], results: List["MigrationResult"], others: Sequence[Tuple[str, str, bytes]]
) -> List["MigrationResult"]:
    """The probe gate's edits (``probe_gate_plan``) of the files re-exporting a probe whose
    file came out native, the probe removed (its APX262 finding); one result per such file of
    ``others`` is appended, a file among the jobs gets the edit on top of its own result."""
    from .results import MigrationResult
    from .findings import Finding
    from .holder_route import apply_holder_edit
    from .probe_gate_plan import reexport_message

    if not plan.reexport_edits:
        return results
    wanted = {}
    for key, result in zip(keys, results):
        if key in plan.reexport_edits and any(f.code == "APX262" and f.fixed for f in result.findings):
            for edit in plan.reexport_edits[key]:
                wanted[edit.path] = (edit, result.path)
    if not wanted:
        return results
    results = list(results)
    for i, key in enumerate(keys):
        if key in wanted:
            edit, probe = wanted.pop(key)
            old = results[i]
            finding = Finding(old.path, edit.lines[0][0], 1, "APX262", reexport_message(edit, probe), fixed=True,
                              severity="info")
            results[i] = MigrationResult(old.path, old.old, apply_holder_edit(old.new, edit), old.findings + [finding])
    for path, shown, source in others:
        if path in wanted:
            edit, probe = wanted.pop(path)
            finding = Finding(shown, edit.lines[0][0], 1, "APX262", reexport_message(edit, probe), fixed=True,
                              severity="info")
            results.append(MigrationResult(shown, source, apply_holder_edit(source, edit), [finding]))
    return results


def _edit_steppable_wrappers(
    plan: "RepoPlan",
    jobs: Sequence[Tuple[str, bytes]],
    keys: Sequence[str],
    results: List["MigrationResult"],
    others: Sequence[Tuple[str, str, bytes]],
) -> List["MigrationResult"]:
    """The wrapper classes (files without apex.amp) whose step a migrated file now hands the
    GradScaler (its finding ``HANDED_CODE`` carries the class and its file in ``about``) get
    the ``scaler=None`` parameter that takes it (``wrapper_step_edit``), also in a file some
    rule rewrote (on top of that rewrite); a wrapper the edit cannot reach (its text, or a
    file the glue route edits too) leaves an error on the line that calls it so."""
    from .results import MigrationResult
    from .findings import Finding
    from .codes import HANDED_CODE
    from .wrapper_step_edit import edit_wrapper_step, wrapper_step_line

    wanted: Dict[str, Dict[Tuple[str, str], List[Tuple[int, Finding]]]] = {}
    for i, key in enumerate(keys):
        planned = {(path, cls): attr for _local, attr, path, cls in (plan.files[key].scaler_steppable if key in
                                                                      plan.files else ())}
        for finding in results[i].findings:
            if finding.code == HANDED_CODE and tuple(finding.about) in planned:
                path, cls = finding.about
                wanted.setdefault(path, {}).setdefault((cls, planned[(path, cls)]), []).append((i, finding))
    if not wanted:
        return results

    def unedited(shown: str, cls: str, attr: str, callers: List[Tuple[int, Finding]], why: str) -> None:
        for i, finding in callers:
            results[i].findings.append(Finding(
                finding.path, finding.line, finding.col, HANDED_CODE,
                f"{shown}: add a scaler=None parameter to {cls}.step() and step its self.{attr} through "
                f"scaler.step(self.{attr}) when one is given, by hand ({why}); until then this call raises "
                "TypeError",
                severity="error",
            ))

    def edited(shown: str, old: bytes, source: bytes, classes, findings: List[Finding]) -> Optional["MigrationResult"]:
        new, findings = source, list(findings)
        for (cls, attr), callers in sorted(classes.items()):
            changed = edit_wrapper_step(new, cls, attr)
            if changed is None:
                unedited(shown, cls, attr, callers, "the tool could not edit that text")
                continue
            new = changed
            findings.append(Finding(
                shown, wrapper_step_line(new, cls), 1, HANDED_CODE,
                f"{cls}.step() takes the GradScaler of {callers[0][1].path} (scaler=None) and steps self.{attr} "
                f"through it when given one; called without it, it steps as before",
                fixed=True, severity="info",
            ))
        return MigrationResult(shown, old, new, findings) if new != source else None

    for i, ((shown, source), key) in enumerate(zip(jobs, keys)):
        if key not in wanted:
            continue
        done = results[i]  # a rule may have rewritten it (a torch.cuda.amp spelling): edit on top
        if done.parse_error is not None or done.internal_error is not None:
            for (cls, attr), callers in sorted(wanted.pop(key).items()):
                unedited(shown, cls, attr, callers, "the tool left that file unchanged")
            continue
        results[i] = edited(shown, source, done.new, wanted.pop(key), done.findings) or done
    extra = []
    for path, shown, source in others:
        if path not in wanted:
            continue
        if path in plan.caller_edits:
            for (cls, attr), callers in sorted(wanted.pop(path).items()):
                unedited(shown, cls, attr, callers, "the glue route also edits that file, and the two edits are "
                         "not made on one text")
            continue
        result = edited(shown, source, source, wanted.pop(path), [])
        if result is not None:
            extra.append(result)
    for path, classes in sorted(wanted.items()):
        for (cls, attr), callers in sorted(classes.items()):
            unedited(path, cls, attr, callers, "the tool did not find that file among those it read")
    return results + extra


def _edit_factory_callers(
    plan: "RepoPlan",
    jobs: Sequence[Tuple[str, bytes]],
    keys: Sequence[str],
    results: List["MigrationResult"],
    others: Sequence[Tuple[str, str, bytes]],
    settings: Settings,
) -> List["MigrationResult"]:
    """The plan's edits of files without apex.amp whose model factory came out native (its
    component was not dropped): the unpackings of its calls take the GradScaler it now
    returns too; a launcher joining the factory to the helpers that scale the losses binds
    it and hands it on to them (``glue_calls``)."""
    from .results import MigrationResult
    from .factory_callers import CODE, apply_edit, edit_message
    from .findings import Finding
    from .glue_calls import apply_glue, glue_message
    from .glue_plan import GlueRoute

    kept = {f.component for f in plan.files.values() if f.component is not None}

    def edited(shown: str, source: bytes, edits) -> Optional["MigrationResult"]:
        live = [edit for component, edit in edits if component in kept]
        if not live:
            return None
        new = source
        findings = []
        for edit in live:
            glued = isinstance(edit, GlueRoute)
            new = (
                apply_glue(new, edit.edit, settings.dtype, settings.torch_at_least(2, 3))
                if glued
                else apply_edit(new, edit)
            )
            line = min(line for line, _ in edit.inserts)
            message = glue_message(edit.factory, edit.edit) if glued else edit_message(edit)
            findings.append(Finding(shown, line, 1, CODE, message, fixed=True, severity="warning"))
        return MigrationResult(shown, source, new, findings)

    for i, ((shown, source), key) in enumerate(zip(jobs, keys)):
        if key not in plan.caller_edits:
            continue
        if not results[i].changed:
            results[i] = edited(shown, source, plan.caller_edits[key]) or results[i]
            continue
        # no rule changes a file without apex.amp; should one ever, its edit is not guessed
        pending = edited(shown, source, plan.caller_edits[key])
        for finding in pending.findings if pending is not None else []:
            results[i].findings.append(
                Finding(shown, finding.line, 1, CODE, f"{finding.message.split(':')[0]}: add `, _` to this "
                        "unpacking by hand (the file was also rewritten, so the tool did not)")
            )
    extra = []
    for path, shown, source in others:
        if path in plan.caller_edits:
            result = edited(shown, source, plan.caller_edits[path])
            if result is not None:
                extra.append(result)
    return results + extra
