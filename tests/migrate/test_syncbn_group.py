"""The helper that replaces apex.parallel.create_syncbn_process_group builds the groups apex
built: every rank creates one group per block of ``group_size`` consecutive ranks, in order,
and keeps the one holding itself; 0 means the whole world (None)."""

from __future__ import annotations

from unittest import mock

import pytest

torch = pytest.importorskip("torch")

from migrate.rules.syncbn import GROUP_HELPER, GROUP_HELPER_NAME  # noqa: E402


def _helper():
    namespace = {"torch": torch}
    exec(GROUP_HELPER, namespace)
    return namespace[GROUP_HELPER_NAME]


def _expected(group_size: int, world_size: int, rank: int):
    """(the blocks created, in order; the block this rank keeps) as apex documented them."""
    if group_size == 0:
        return [], None
    blocks = [tuple(range(start, start + group_size)) for start in range(0, world_size, group_size)]
    return blocks, blocks[rank // group_size]


@pytest.mark.parametrize(
    "world_size, group_size", [(w, g) for w in (1, 2, 4, 8) for g in (0, 1, 2, 4, 8) if g <= w]
)
def test_every_rank_creates_every_block_and_keeps_its_own(world_size, group_size):
    helper = _helper()
    for rank in range(world_size):
        created = []

        def new_group(ranks):
            created.append(tuple(ranks))
            return tuple(ranks)

        with mock.patch("torch.distributed.get_world_size", return_value=world_size), mock.patch(
            "torch.distributed.get_rank", return_value=rank
        ), mock.patch("torch.distributed.new_group", side_effect=new_group):
            kept = helper(group_size)
        blocks, own = _expected(group_size, world_size, rank)
        assert (created, kept) == (blocks, own)


def test_a_group_size_that_does_not_divide_the_world_fails_loudly():
    with mock.patch("torch.distributed.get_world_size", return_value=6), mock.patch(
        "torch.distributed.get_rank", return_value=0
    ), mock.patch("torch.distributed.new_group"):
        with pytest.raises(ValueError):
            _helper()(4)
