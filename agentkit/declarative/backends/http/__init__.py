"""The ``http`` backend kind: a tool that is one HTTP request, templated from its inputs.

``backend`` is the kind (``HttpBackend``: parse, call); ``spec`` checks a definition's
``backend.http`` into an ``HttpSpec``; ``sources`` reads the ``source:`` documents its
tools share (base URL per environment, auth, headers, shared parameters); ``request``
builds the request, ``transport`` sends it under one deadline, ``responses`` reads the
reply into the output schema (``projection``), ``failures`` says what went wrong;
``url``, ``values``, ``multipart``, ``pagination`` and ``oauth2`` are the parts of a
request the YAML can describe.
"""
