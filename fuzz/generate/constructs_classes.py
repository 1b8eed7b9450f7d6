"""Constructs that call classes and use function objects the way Dynamo models them one by one.

Registered constructs (see ``fuzz.generate.registry``):

- ``class-calls``: three forms, each adding to an int, that call a class or a
  class's method inside ``f``: a seeded ``random.Random`` (its ``getstate``,
  ``setstate``, ``randint``, ``randrange``, ``uniform``), a
  ``types.MappingProxyType``, ``torch.Size`` made from a list, a class's
  ``__subclasses__()``, methods of ``list`` and ``OrderedDict`` called unbound
  on a subclass instance, ``copy.copy`` of a ``defaultdict`` and a bounded
  ``deque``, ``types.SimpleNamespace`` with ``copy.replace`` (3.13+), the
  ``|`` and ``|=`` of a ``defaultdict`` with a dict on either side, a
  ``typing.TypedDict`` called, and a ``torch.return_types`` struct sequence
  built from a tuple. Dynamo models these in
  ``torch/_dynamo/variables/user_defined.py`` (``UserDefinedClassVariable``
  ``call_function`` and ``call_method``, ``DefaultDictVariable``,
  ``SimpleNamespaceVariable``) and ``misc.py`` (``RandomVariable``).
- ``function-objects``: three forms over function and generator objects, in
  ``torch/_dynamo/variables/functions.py``: ``throw`` into a local generator
  (caught inside it, and not caught), ``close`` of a generator that catches
  ``GeneratorExit`` and returns a value (``close()`` returns it on 3.13+,
  PEP 667's neighbour gh-104770) and of one delegating with ``yield from``; a
  property's descriptor methods called explicitly and the AttributeError of
  setting or deleting a property with no setter or deleter (its message is
  printed, and changed in 3.11); ``torch._dynamo.nonstrict_trace`` applied
  inside ``f``; a function's and a ``functools.partial``'s attributes read.

Every form is deterministic in eager: no ``id()``, ``hash()`` or unseeded
randomness reaches an output.
"""

from __future__ import annotations

from fuzz.generate.prelude import helper, imported
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

_RANDOM = imported("random")
_TYPES = imported("types")
_COPY = imported("copy")
_SYS = imported("sys")
_TYPING = imported("typing")
_COLLECTIONS = imported("collections")
_FUNCTOOLS = imported("functools")

_SHAPES = helper("Shape", '''
    class Shape:
        sides = 0


    class ShapeTri(Shape):
        sides = 3


    class ShapeQuad(Shape):
        sides = 4
''')
_PILE = helper("Pile", '''
    class Pile(list):
        def total(self):
            return sum(self)
''')
_COORD = helper("Coord", '''
    class Coord(typing.TypedDict):
        x: int
        y: int
''', needs=(_TYPING,))
_RESILIENT = helper("resilient", '''
    def resilient(xs):
        total = 0
        for x in xs:
            try:
                yield x + total
            except ValueError as e:
                total += len(e.args)
                yield -1
''')
_CLOSING = helper("closing_gen", '''
    def closing_gen(log):
        try:
            yield 1
            yield 2
        except GeneratorExit:
            log.append("exit")
            return 5
        finally:
            log.append("finally")


    def delegating_gen(log):
        got = yield from closing_gen(log)
        log.append(got)
''')
_GAUGE = helper("Gauge", '''
    class Gauge:
        def __init__(self, v):
            self._v = v

        @property
        def reading(self):
            return self._v

        @property
        def dial(self):
            return self._v * 2

        @dial.setter
        def dial(self, v):
            self._v = v // 2
''')
_TUNED = helper("tuned", '''
    def tuned(x, scale=2, *, shift=1):
        """Scale and shift."""
        return x * scale + shift
''')

# The forms of class-calls: each adds to the int k{n}; "struct-seq" also makes a
# tensor with |value| <= 1 that the construct's output adds.
_CLASS_FORMS = ("random-object", "mappingproxy", "torch-size", "subclasses", "unbound-base", "copy-containers",
                "namespace", "defaultdict-or", "typed-dict", "struct-seq")


@construct("class-calls", weight=2, features={
    "class-calls": "classes called and class methods used in f: random.Random(seed) with getstate/setstate, "
                   "types.MappingProxyType, torch.Size(list), __subclasses__(), list/OrderedDict methods called "
                   "unbound on subclass instances, copy.copy of defaultdict and deque(maxlen=), SimpleNamespace "
                   "with copy.replace (3.13+), defaultdict | dict and dict | defaultdict, a TypedDict called, "
                   "torch.return_types.max built from a tuple",
})
def class_calls(w: StatementWriter, scope: Scope) -> None:
    """Three forms each adding to an int that scales a tensor."""
    w.features.update({"class-calls", "print"})
    k = w.fresh("k")
    w.emit(scope, f"{k} = 0")
    extra = ""
    forms = list(_CLASS_FORMS)
    for _ in range(3):
        form = w.pick(forms)
        forms.remove(form)
        if form == "random-object":
            w.need(_RANDOM)
            rng, state, a = w.fresh("rng"), w.fresh("state"), w.fresh("a")
            w.emit(scope, f"{rng} = random.Random(n + 3)")
            w.emit(scope, f"{state} = {rng}.getstate()")
            w.emit(scope, f"{a} = {rng}.randint(0, 9) + {rng}.randrange(1, 9, 2)")
            w.maybe_break(scope, 0, 20)
            w.emit(scope, f"{rng}.setstate({state})")
            w.emit(scope, f"{k} += {a} - {rng}.randint(0, 9) - {rng}.randrange(1, 9, 2) "
                          f"+ int({rng}.uniform(0, 4)) + int({rng}.random() * 3)")
        elif form == "mappingproxy":
            w.need(_TYPES)
            mp = w.fresh("mp")
            w.emit(scope, f'{mp} = types.MappingProxyType({{"a": n, "b": 2}})')
            w.emit(scope, f'{k} += {mp}["a"] + len({mp}) + {mp}.get("c", 1) + sum({mp}.values()) + ("b" in {mp}) '
                          f'+ len({mp} | {{"c": 3}})')
        elif form == "torch-size":
            sz = w.fresh("sz")
            w.emit(scope, f"{sz} = torch.Size([n, 2]) + t0.shape[-1:]")
            w.emit(scope, f"{k} += {sz}.numel() % 7 + len({sz}) + {sz}[-1] + (torch.Size([2]) == (2,)) "
                          f"+ len(torch.Size(t0.shape))")
        elif form == "subclasses":
            w.need(_SHAPES)
            w.features.add("comprehension")
            w.emit(scope, f"{k} += len(Shape.__subclasses__()) + sum(c.sides for c in Shape.__subclasses__()) "
                          f"+ ShapeTri.__base__.sides + len(ShapeQuad.__mro__)")
        elif form == "unbound-base":
            w.need(_PILE)
            w.need(_COLLECTIONS)
            st, od = w.fresh("stack"), w.fresh("od")
            w.emit(scope, f"{st} = Pile([n])")
            w.emit(scope, f"list.append({st}, 2)")
            w.emit(scope, f"list.extend({st}, (3, n))")
            w.emit(scope, f"{od} = collections.OrderedDict(a=1, b=n)")
            w.emit(scope, f'collections.OrderedDict.move_to_end({od}, "a")')
            w.maybe_break(scope, 0, 20)
            w.emit(scope, f"{k} += len({st}) + list.__len__({st}) + list.count({st}, n) + {st}.total() "
                          f'+ (list({od})[0] == "b") + list({od}.values())[-1]')
        elif form == "copy-containers":
            w.need(_COPY)
            w.need(_COLLECTIONS)
            dd, dq = w.fresh("dd"), w.fresh("dq")
            w.emit(scope, f'{dd} = collections.defaultdict(list, {{"a": [n]}})')
            w.emit(scope, f"{dq} = collections.deque([1, n, 2], maxlen=3)")
            w.emit(scope, f"{dd}2, {dq}2 = copy.copy({dd}), copy.copy({dq})")
            w.emit(scope, f'{dd}2["b"].append(2)')
            w.emit(scope, f"{dq}2.append(5)")
            w.emit(scope, f'{k} += len({dd}) + len({dd}2) + {dq}2.maxlen + {dq}2[0] + len({dq}) + {dd}2["a"][0]')
        elif form == "namespace":
            w.need(_TYPES)
            w.need(_COPY)
            w.need(_SYS)
            w.features.add("if")
            ns = w.fresh("ns")
            w.emit(scope, f"{ns} = types.SimpleNamespace(a=n, b=2)")
            w.emit(scope, f"{ns}.c = 1")
            w.emit(scope, "if sys.version_info >= (3, 13):")
            w.emit(scope, f"{ns}2 = copy.replace({ns}, a=5)", 1)
            w.emit(scope, "else:")
            w.emit(scope, f'{ns}2 = types.SimpleNamespace(**{{**vars({ns}), "a": 5}})', 1)
            w.maybe_break(scope, 0, 20)
            w.emit(scope, f"{k} += {ns}2.a + {ns}.a + len(vars({ns}2)) "
                          f"+ ({ns} == types.SimpleNamespace(a=n, b=2, c=1)) + ({ns}2 != {ns})")
        elif form == "defaultdict-or":
            w.need(_COLLECTIONS)
            dd = w.fresh("dd")
            w.emit(scope, f'{dd} = collections.defaultdict(int, {{"a": n}})')
            w.emit(scope, f'{dd}_or = {dd} | {{"b": 2}}')
            w.emit(scope, f'{dd}_ror = {{"c": 1}} | {dd}')
            w.emit(scope, f'{dd} |= {{"d": 3}}')
            w.emit(scope, f'{k} += len({dd}_or) + {dd}_or["zz"] + len({dd}_or) + len({dd}_ror) + len({dd}) '
                          f"+ isinstance({dd}_or, collections.defaultdict) "
                          f"+ isinstance({dd}_ror, collections.defaultdict)")
        elif form == "typed-dict":
            w.need(_COORD)
            p = w.fresh("coord")
            w.emit(scope, f"{p} = Coord(x=n, y=2)")
            w.emit(scope, f'{p}["x"] += 1')
            w.emit(scope, f'{k} += {p}["x"] + len({p}) + sum({p}.values()) + isinstance({p}, dict)')
        else:
            w.features.add("reduction")
            a = w.pick(scope.tensors)
            mx = w.fresh("mx")
            w.emit(scope, f"{mx} = torch.return_types.max(({a}.float().amax(), {a}.float().argmax()))")
            w.emit(scope, f"{k} += len({mx}) + torch.return_types.max.n_fields")
            extra = f" + {mx}.values.clamp(-1.0, 1.0) * 0.5 + {mx}[1].clamp(0, 1) * 0.25"
    w.emit(scope, f"print({k})")
    w.put(scope, f"{w.atom(scope)} * ({k} % 5) * 0.25{extra}", 6.0)


_FUNCTION_FORMS = ("gen-throw", "gen-close", "property-descriptor", "nonstrict-call", "function-attrs")


@construct("function-objects", weight=2, features={
    "function-objects": "throw into a local generator (caught inside it and not), close of a generator that "
                        "returns from its GeneratorExit handler and of one delegating with yield from, a property's "
                        "__get__/__set__/fget called explicitly and setting or deleting a property with no setter "
                        "(the AttributeError's message printed), torch._dynamo.nonstrict_trace applied in f, a "
                        "function's and a functools.partial's attributes",
})
def function_objects(w: StatementWriter, scope: Scope) -> None:
    """Three forms each adding to an int (and maybe a tensor) that scales a tensor."""
    w.features.update({"function-objects", "print"})
    k = w.fresh("k")
    w.emit(scope, f"{k} = 0")
    extra = ""
    forms = list(_FUNCTION_FORMS)
    for _ in range(3):
        form = w.pick(forms)
        forms.remove(form)
        if form == "gen-throw":
            w.need(_RESILIENT)
            w.features.add("try-except")
            g = w.fresh("gen")
            w.emit(scope, f"{g} = resilient([n, 2, 3])")
            w.emit(scope, f'{k} += next({g}) + {g}.throw(ValueError("x", "y")) + next({g})')
            w.emit(scope, "try:")
            w.emit(scope, f'{g}.throw(KeyError("k"))', 1)
            w.emit(scope, "except KeyError as e:")
            w.emit(scope, f"{k} += len(e.args)", 1)
            w.emit(scope, f"{k} += next({g}, 7)")
            # the generator is dead past here: a graph break does not make Dynamo rebuild it
            w.maybe_break(scope, 0, 20)
        elif form == "gen-close":
            w.need(_CLOSING)
            log, g = w.fresh("log"), w.fresh("gen")
            w.emit(scope, f"{log} = []")
            w.emit(scope, f"{g} = closing_gen({log})")
            w.emit(scope, f"{k} += next({g})")
            w.emit(scope, f"{g}_closed = {g}.close()  # 5 on 3.13+, None before")
            w.emit(scope, f"{g}2 = delegating_gen({log})")
            w.emit(scope, f"{k} += next({g}2)")
            w.emit(scope, f"{g}2.close()")
            w.emit(scope, f"{k} += len({log}) + ({g}_closed or 0) + next({g}, 4)")
            # both generators are dead past here (a live one at a graph break makes Dynamo run f eagerly)
            w.maybe_break(scope, 0, 20)
            w.emit(scope, f"print({log})")
        elif form == "property-descriptor":
            w.need(_GAUGE)
            w.features.add("try-except")
            gg = w.fresh("gauge")
            w.emit(scope, f"{gg} = Gauge(n)")
            w.emit(scope, "try:")
            w.emit(scope, f"{gg}.reading = 3", 1)
            w.emit(scope, "except AttributeError as e:")
            w.emit(scope, "print(e)", 1)
            w.emit(scope, f"{k} += 1", 1)
            w.emit(scope, f"Gauge.dial.__set__({gg}, 6)")
            w.maybe_break(scope, 0, 20)
            w.emit(scope, f"{k} += Gauge.dial.__get__({gg}) + Gauge.reading.fget({gg}) "
                          f"+ (type({gg}).dial.fset is not None) + (Gauge.reading.fdel is None)")
            w.emit(scope, "try:")
            w.emit(scope, f"del {gg}.dial", 1)
            w.emit(scope, "except AttributeError as e:")
            w.emit(scope, "print(e)", 1)
            w.emit(scope, f"{k} += 2", 1)
        elif form == "nonstrict-call":
            w.need(_TUNED)
            a = w.pick(scope.tensors)
            nt = w.fresh("nt")
            w.emit(scope, f"{nt} = torch._dynamo.nonstrict_trace(tuned)")
            w.emit(scope, f"{k} += 1")
            extra = f" + ({nt}({a}.float().clamp(-1.0, 1.0), 0.25, shift=0.0) * 0.5)"
        else:
            w.need(_TUNED)
            w.need(_FUNCTOOLS)
            p = w.fresh("part")
            w.emit(scope, f"{p} = functools.partial(tuned, 1, shift=n)")
            w.emit(scope, f'{k} += len(tuned.__name__) + tuned.__defaults__[0] + tuned.__kwdefaults__["shift"] '
                          f"+ tuned.__code__.co_argcount + len(tuned.__qualname__) + (tuned.__doc__ is not None) "
                          f'+ {p}.keywords["shift"] + len({p}.args) + ({p}.func is tuned) + {p}(scale=3)')
    w.emit(scope, f"print({k})")
    w.put(scope, f"{w.atom(scope)} * ({k} % 5) * 0.25{extra}", 6.0)
