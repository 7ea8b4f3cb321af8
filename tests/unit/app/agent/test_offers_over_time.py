"""A ReqOffers with over_time: each span answered with its steps over the window."""

from __future__ import annotations

from braid.adapters.rpc.agent_servicer import offer_message, offers_call
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.app.agent.messages import OffersCall, PrepCall, SpanOffer
from braid.core.negotiation.holds import SegmentAsk
from tests.unit.app.agent.test_prep_call import SPAN, TOKEN, WINDOW, G, _agent

START, END = WINDOW
MIDDLE = (START + 1000, START + 2000)


def test_a_held_sub_window_shows_as_a_lower_step_and_the_rest_stays_full() -> None:
    agent = _agent()
    call = OffersCall("tx1", TOKEN, WINDOW, (SPAN,), True)
    [free] = agent.offers(call)
    vote = agent.prepare(PrepCall("tx2", TOKEN, MIDDLE, (SegmentAsk(*SPAN, G, 0),), 600, True))
    assert vote.yes
    [timed] = agent.offers_over_time(call)
    assert timed.steps == (
        (START, MIDDLE[0], free),
        (MIDDLE[0], MIDDLE[1], free - G),
        (MIDDLE[1], END, free),
    )
    # The whole-window value is unchanged in meaning: the least of the steps.
    assert timed.bandwidth == free - G == agent.offers(call)[0]


def test_an_untouched_window_is_one_step() -> None:
    agent = _agent()
    [timed] = agent.offers_over_time(OffersCall("tx1", TOKEN, WINDOW, (SPAN,), True))
    assert timed.steps == ((START, END, timed.bandwidth),)


def test_the_proto_carries_the_flag_and_the_steps() -> None:
    request = pb.ReqOffers(
        transaction_id="tx1",
        token=TOKEN,
        window=pb.Window(start=START, end=END),
        spans=[pb.Span(entry=SPAN[0], exit=SPAN[1])],
        over_time=True,
    )
    assert offers_call(request).over_time
    assert not offers_call(pb.ReqOffers(window=pb.Window(start=START, end=END))).over_time
    message = offer_message(
        request.spans[0], SpanOffer(5, ((START, END - 1, 5), (END - 1, END, 7)))
    )
    assert message.bandwidth_bps == 5
    assert [(s.start, s.end, s.bandwidth_bps) for s in message.steps] == [
        (START, END - 1, 5),
        (END - 1, END, 7),
    ]
    assert not offer_message(request.spans[0], 5).steps
