import asyncio
import os
import signal

from covey.tools.processes import ProcessTracker

from .conftest import live_members


async def spawn(command):
    return await asyncio.create_subprocess_shell(command, start_new_session=True)


async def test_kill_all_kills_every_group_and_is_idempotent():
    tracker = ProcessTracker()
    procs = [await spawn("sleep 30 & sleep 30"), await spawn("sleep 30")]
    for proc in procs:
        tracker.track(proc)
    await asyncio.sleep(0.1)
    assert all(live_members(p.pid) for p in procs)
    await tracker.kill_all(grace_s=0.3)
    for _ in range(40):  # a loaded machine may take a moment to finish delivering the signals
        if not any(live_members(p.pid) for p in procs):
            break
        await asyncio.sleep(0.05)
    assert not any(live_members(p.pid) for p in procs)
    assert tracker.live_groups() == []
    await tracker.kill_all(grace_s=0.3)


async def test_sigterm_resistant_group_gets_sigkill_after_grace():
    tracker = ProcessTracker()
    proc = await spawn("trap '' TERM; sleep 30 & wait")
    tracker.track(proc)
    await asyncio.sleep(0.2)
    await tracker.kill(proc.pid, grace_s=0.2)
    assert proc.returncode == -signal.SIGKILL
    assert not live_members(proc.pid)


async def test_groups_it_did_not_start_are_left_alone():
    tracker, stranger = ProcessTracker(), await spawn("sleep 30")
    try:
        await tracker.kill(stranger.pid)
        await tracker.kill_all()
        assert live_members(stranger.pid)
    finally:
        os.killpg(stranger.pid, signal.SIGKILL)  # the shell may have forked sleep: kill both
        await stranger.wait()


async def test_forgets_groups_whose_members_all_exited():
    tracker = ProcessTracker()
    proc = await spawn("true")
    tracker.track(proc)
    await proc.wait()
    assert tracker.live_groups() == []
