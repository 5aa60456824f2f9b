"""The handlers of the actions over the state protocols (DLQ, pairing, sessions, `why`); each
runs in the daemon and, through `StateContext`, in the CLI when no daemon answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatgate.operator.results import (
    DlqDrop,
    DlqList,
    DlqReplay,
    Found,
    PairingApproval,
    PairingList,
    SessionReset,
    SessionShow,
    SessionsList,
    Trails,
    TurnStats,
)

if TYPE_CHECKING:
    from chatgate.operator.arguments import (
        DlqListArgs,
        EntryArgs,
        NoArgs,
        PairingCodeArgs,
        RevokeArgs,
        SessionArgs,
        WhyArgs,
    )
    from chatgate.operator.context import OperatorContext

SESSIONS_SHOWN = 200


async def dlq_list(ctx: OperatorContext, args: DlqListArgs) -> DlqList:
    return DlqList(tuple(await ctx.state.dead_letters.list(args.limit)))


async def dlq_drop(ctx: OperatorContext, args: EntryArgs) -> DlqDrop:
    held = await ctx.state.dead_letters.get(args.id)
    found = await ctx.state.dead_letters.drop(args.id)
    if found and held is not None:
        await ctx.dead_letter_dropped(held)
    return DlqDrop(found, args.id)


async def dlq_replay(ctx: OperatorContext, args: EntryArgs) -> DlqReplay:
    return await ctx.replay_dead_letter(args.id)


async def pairing_list(ctx: OperatorContext, args: NoArgs) -> PairingList:
    pairing = ctx.state.pairing
    return PairingList(tuple(await pairing.pending(ctx.now())), tuple(await pairing.approved()))


async def pairing_approve(ctx: OperatorContext, args: PairingCodeArgs) -> PairingApproval:
    decision = await ctx.state.pairing.approve(args.channel, args.code, ctx.now())
    return PairingApproval(decision.outcome, decision.sender_id, decision.locked_until)


async def pairing_deny(ctx: OperatorContext, args: PairingCodeArgs) -> Found:
    return Found(await ctx.state.pairing.deny(args.channel, args.code))


async def pairing_revoke(ctx: OperatorContext, args: RevokeArgs) -> Found:
    return Found(await ctx.state.pairing.revoke(args.channel, args.sender_id))


async def sessions_list(ctx: OperatorContext, args: NoArgs) -> SessionsList:
    return SessionsList(tuple(await ctx.state.sessions.recent(SESSIONS_SHOWN)))


async def session_show(ctx: OperatorContext, args: SessionArgs) -> SessionShow:
    lines = await ctx.state.sessions.transcript(args.key)
    return SessionShow(lines is not None, args.key, tuple(lines or ()))


async def session_reset(ctx: OperatorContext, args: SessionArgs) -> SessionReset:
    return SessionReset(args.key, await ctx.reset_session(args.key))


async def why(ctx: OperatorContext, args: WhyArgs) -> Trails:
    from chatgate.state import admin  # the journal's reading; not needed to build the CLI

    found = await admin.why(ctx.state, args.channel, args.message_id, args.user)
    return Trails(tuple(found["trails"]))


async def turn_stats(ctx: OperatorContext, args: NoArgs) -> TurnStats:
    return TurnStats(ctx.turn_stats())
