<?php
// GET /json for the php-fpm fixture: serialised from a fresh array on every request.
$body = json_encode(['message' => 'Hello, World!']);
header('Content-Type: application/json');
header('Content-Length: ' . strlen($body));
echo $body;
